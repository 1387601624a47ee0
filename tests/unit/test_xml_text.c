/* test_xml_text.c: runner/report/xml.c: any bytes become XML 1.0 text: invalid UTF-8 -> U+FFFD,
 * forbidden controls -> visible \xNN, colour sequences dropped, a cut never splits a character;
 * random bytes always give a string libxml2 parses back. */
#include "testutil.h"
#include <libxml/parser.h>
#include <libxml/xmlwriter.h>
#include "../../runner/report/xml.h"

#define FFFD "\xEF\xBF\xBD"

static void expect(const char *in, size_t n, const char *want)
{
    char *got = xml_text_clean(in, n);
    assert_string_equal(got, want);
    free(got);
}

static void test_mappings(void **state)
{
    expect("plain text\tand\r\nlines", 21, "plain text\tand\r\nlines");
    expect("\xE4\xB8\xAD\xE6\x96\x87 ok", 9, "\xE4\xB8\xAD\xE6\x96\x87 ok");             /* Chinese stays */
    expect("\xF0\x9F\x98\x80", 4, "\xF0\x9F\x98\x80");                                  /* 4-byte stays */
    expect("a\xE4\xB8", 3, "a" FFFD FFFD);                                              /* cut multibyte */
    expect("a\0b", 3, "a\\x00b");                                                       /* NUL */
    expect("\x01\x0B\x0C\x1F", 4, "\\x01\\x0B\\x0C\\x1F");
    expect("\033[33m Run ok \033[0m", 17, " Run ok ");                                  /* colour dropped */
    expect("\033x", 2, "\\x1Bx");                                                       /* lone ESC */
    expect("\xC0\xAF", 2, FFFD FFFD);                                                   /* overlong '/' */
    expect("\xED\xA0\x80", 3, FFFD FFFD FFFD);                                          /* surrogate */
    expect("\xF4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD);                                 /* > U+10FFFF */
    expect("\xEF\xBF\xBE\xEF\xBF\xBF", 6, FFFD FFFD);                                   /* U+FFFE, U+FFFF */
    expect("\x80\xBF\xFE\xFF", 4, FFFD FFFD FFFD FFFD);
    char *e = xml_text_clean_str(NULL);
    assert_string_equal(e, "");
    free(e);
}

/* Strict check: valid UTF-8, only XML 1.0 characters. */
static int is_xml_text(const unsigned char *s)
{
    while (*s) {
        uint32_t cp;
        int len;
        if (s[0] < 0x80) cp = s[0], len = 1;
        else if ((s[0] & 0xE0) == 0xC0) cp = s[0] & 0x1F, len = 2;
        else if ((s[0] & 0xF0) == 0xE0) cp = s[0] & 0x0F, len = 3;
        else if ((s[0] & 0xF8) == 0xF0) cp = s[0] & 0x07, len = 4;
        else return 0;
        for (int i = 1; i < len; i++) {
            if ((s[i] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i] & 0x3F);
        }
        static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[len]) return 0; /* overlong */
        bool ok = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                  (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
        if (!ok) return 0;
        s += len;
    }
    return 1;
}

static void test_random_bytes_parse(void **state)
{
    unsigned seed = 12345;
    unsigned char buf[512];
    for (int iter = 0; iter < 2000; iter++) {
        size_t n = (size_t)(rand_r(&seed) % sizeof buf);
        for (size_t i = 0; i < n; i++) {
            unsigned r = (unsigned)rand_r(&seed);
            /* mix: raw bytes, UTF-8 lead/continuation bytes, controls, XML specials */
            static const unsigned char pick[] = {0, 0x1B, '[', 'm', '<', '&', '"', ']', '>', 0xC3, 0xA9, 0xE4, 0xB8,
                                                 0xAD, 0xF0, 0x9F, 0xED, 0xA0, 0xEF, 0xBF, 0xBE, '\r', '\n'};
            buf[i] = r % 3 ? (unsigned char)(r >> 8) : pick[(r >> 8) % sizeof pick];
        }
        char *clean = xml_text_clean((const char *)buf, n);
        assert_true(is_xml_text((const unsigned char *)clean));
        /* and libxml2 writes and re-reads it, as text and as an attribute */
        xmlBufferPtr xb = xmlBufferCreate();
        xmlTextWriterPtr w = xmlNewTextWriterMemory(xb, 0);
        assert_true(xmlTextWriterStartDocument(w, NULL, "UTF-8", NULL) >= 0);
        assert_true(xmlTextWriterStartElement(w, BAD_CAST "a") >= 0);
        assert_true(xmlTextWriterWriteAttribute(w, BAD_CAST "v", BAD_CAST clean) >= 0);
        assert_true(xmlTextWriterWriteString(w, BAD_CAST clean) >= 0);
        assert_true(xmlTextWriterEndDocument(w) >= 0);
        xmlFreeTextWriter(w);
        xmlDocPtr doc = xmlReadMemory((const char *)xmlBufferContent(xb), xmlBufferLength(xb), "t.xml", NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        assert_non_null(doc);
        xmlFreeDoc(doc);
        xmlBufferFree(xb);
        free(clean);
    }
}

static void test_tail_cut_on_a_character(void **state)
{
    char path[256];
    snprintf(path, sizeof path, "%s/tail-%d.log", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 100; i++) fputs("\xE4\xB8\xAD", f); /* 300 bytes, no newline */
    fclose(f);
    for (size_t max = 1; max <= 12; max++) {
        bool cut;
        char *t = xml_text_file_tail(path, max, &cut);
        assert_non_null(t);
        assert_true(cut);
        assert_null(strstr(t, FFFD)); /* never half a character */
        assert_int_equal(strlen(t) % 3, 0);
        assert_true(strlen(t) <= max);
        free(t);
    }
    f = fopen(path, "wb");
    fputs("old line\nlast line\n", f);
    fclose(f);
    bool cut;
    char *t = xml_text_file_tail(path, 15, &cut);
    assert_true(cut);
    assert_string_equal(t, "last line\n"); /* starts on a line when one is near */
    free(t);
    t = xml_text_file_tail(path, 100, &cut);
    assert_false(cut);
    assert_string_equal(t, "old line\nlast line\n");
    free(t);
    unlink(path);
    assert_null(xml_text_file_tail(path, 10, &cut));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mappings),
        cmocka_unit_test(test_random_bytes_parse),
        cmocka_unit_test(test_tail_cut_on_a_character),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
