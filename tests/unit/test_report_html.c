/* test_report_html.c: runner/report/html.c: the HTML report is well-formed (an XML parser reads
 * it back) whatever bytes the model name, config path, reasons and metrics hold; it has a loss
 * polyline per rank, the eval dots, the timeline, the verdict; a metrics line cut by a crash is
 * skipped, not fatal. */
#include "testutil.h"
#include <sys/stat.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include "../../runner/report/report.h"

static char dir[256];

static int count(xmlDocPtr doc, const char *xpath)
{
    xmlXPathContextPtr cx = xmlXPathNewContext(doc);
    xmlXPathRegisterNs(cx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST xpath, cx);
    int n = o && o->nodesetval ? o->nodesetval->nodeNr : -1;
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(cx);
    return n;
}

static void test_hostile_strings_and_curves(void **state)
{
    snprintf(dir, sizeof dir, "%s/html-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    assert_int_equal(mkdir(dir, 0755), 0);
    char metrics[300], html[300], log[300];
    snprintf(metrics, sizeof metrics, "%s/metrics.jsonl", dir);
    snprintf(html, sizeof html, "%s/report.html", dir);
    snprintf(log, sizeof log, "%s/results.log", dir);
    const char *stage = "m\\u00ff.mode.train[x]"; /* JSON escape: the name below, cleaned */
    FILE *f = fopen(metrics, "w");
    fprintf(f, "{\"event\":\"run\",\"os\":\"Linux\",\"cpus\":2,\"tipc_version\":\"0.1.0\",\"t\":1}\n");
    fprintf(f, "{\"event\":\"train_start\",\"stage\":\"%s\",\"rank\":0,\"world\":2,\"steps_per_epoch\":4,\"t\":1}\n", stage);
    for (int r = 0; r < 2; r++)
        for (int s = 1; s <= 8; s++)
            fprintf(f, "{\"event\":\"train_step\",\"stage\":\"%s\",\"rank\":%d,\"step\":%d,\"loss\":%g,\"top1\":%d,"
                       "\"ips\":%d,\"t\":1}\n", stage, r, s, 2.0 / s, 10 * s, 100 + r);
    fprintf(f, "{\"event\":\"eval\",\"stage\":\"%s\",\"epoch\":1,\"top1\":55.5,\"top5\":90,\"t\":1}\n", stage);
    fprintf(f, "{\"event\":\"eval\",\"stage\":\"other.eval\",\"epoch\":2,\"top1\":61.25,\"t\":1}\n");
    fprintf(f, "{\"event\":\"train_step\",\"stage\":\"%s\",\"rank\":0,\"st", stage); /* cut by a crash */
    fclose(f);

    struct report r;
    report_init(&r, "cfg\xff<script>alert(1)</script>.txt", "m\xc3\xbf", "mode", log);
    r.color = r.color_err = false;
    FILE *devnull = fopen("/dev/null", "w");
    int saved = dup(1);
    fflush(stdout);
    dup2(fileno(devnull), 1);
    assert_int_equal(report_stage(&r, "train", "x", "train \x01\xfe cmd", NULL, 4, "exit \x1b[31m4\x00", r.started,
                                  2.5, 13), TIPC_OK);
    report_skip(&r, 2, 2, "eval", "x", "eval", "train[x] failed \xe4\xb8", 17, false);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    fclose(devnull);
    assert_int_equal(report_html(&r, metrics, html), TIPC_OK);

    xmlDocPtr doc = xmlReadFile(html, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    assert_non_null(doc); /* well-formed */
    assert_int_equal(count(doc, "//script"), 0);                                     /* text, not markup */
    assert_int_equal(count(doc, "//s:svg[@class='loss']/s:polyline[@class='loss']"), 2); /* one per rank */
    assert_int_equal(count(doc, "//s:svg[@class='accuracy']/s:circle"), 1);              /* the eval dot */
    assert_int_equal(count(doc, "//s:svg[@class='timeline']/s:rect"), 2);
    assert_int_equal(count(doc, "//p[@class='verdict failed']"), 1);
    assert_int_equal(count(doc, "//td[@class='failed']"), 1);
    assert_int_equal(count(doc, "//td[@class='skipped']"), 1);
    xmlFreeDoc(doc);
    f = fopen(html, "r");
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_non_null(strstr(buf, "loss fell from 2.0000 to 0.2500"));
    assert_non_null(strstr(buf, "other.eval: top-1 61.25%"));
    assert_non_null(strstr(buf, "&lt;script&gt;"));
    unlink(html);
    unlink(metrics);
    unlink(log);
    rmdir(dir);
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_strings_and_curves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
