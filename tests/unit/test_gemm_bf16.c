/* test_gemm_bf16.c: the bf16 GEMM (engine/ops/cpu/gemm_bf16.c). Its emulated kernel (vdpbf16ps
 * by definition) equals, bit for bit, a plain loop doing what vdpbf16ps does (per output: odd
 * element's product, then even's, each one fp32 FMA), on odd sizes (row, column and K tails) and
 * on a K long enough for two K chunks; and is within fp32 accumulation error of a double
 * reference. The native kernel (vdpbf16ps) runs and is compared only on a CPU with AVX512-BF16
 * running the x86-64-v4 kernels; elsewhere that one comparison is skipped with a printed reason. */
#include "testutil.h"
#include "isa_test.h"

#include "../../engine/ops/cpu/gemm_bf16.h"
#include "../../engine/ops/precision.h"
#include "../../core/rng.h"

static float rand_bf16(struct rng *r) { return round_bf16((float)rng_normal(r)); }

static void check(int M, int N, int K)
{
    struct rng r;
    rng_seed(&r, (uint64_t)(M * 131 + N * 7 + K));
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * N * K);
    float *C = malloc(sizeof(float) * M * N), *C2 = malloc(sizeof(float) * M * N);
    uint32_t *pack = malloc(4 * gemm_bf16_pack_words(N, K));
    for (int i = 0; i < M * K; i++) A[i] = rand_bf16(&r);
    for (int i = 0; i < N * K; i++) B[i] = rand_bf16(&r);
    gemm_bf16_nt(false, M, N, K, A, K, B, K, C, N, pack);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            const float *a = A + (size_t)m * K, *b = B + (size_t)n * K;
            float acc = 0;
            double ref = 0, mag = 0;
            for (int k = 0; k < K; k += 2) {
                if (k + 1 < K) acc = fmaf(a[k + 1], b[k + 1], acc);
                acc = fmaf(a[k], b[k], acc);
            }
            for (int k = 0; k < K; k++) ref += (double)a[k] * b[k], mag += fabs((double)a[k] * b[k]);
            float got = C[(size_t)m * N + n];
            if (got != acc) fail_msg("%dx%dx%d C[%d,%d] = %.9g, vdpbf16ps order gives %.9g", M, N, K, m, n, got, acc);
            assert_true(fabs(got - ref) <= 1e-6 * K * mag + 1e-30);
        }
    if (gemm_bf16_native()) {
        gemm_bf16_nt(true, M, N, K, A, K, B, K, C2, N, pack);
        assert_memory_equal(C, C2, sizeof(float) * M * N);
    }
    free(A), free(B), free(C), free(C2), free(pack);
}

static void test_emulated_equals_vdpbf16ps_order(void **state)
{
    check(37, 45, 77);    /* every tail: rows % 8, columns % 16, odd K */
    check(8, 16, 2);
    check(1, 1, 1);
    check(19, 33, 2100);  /* two K chunks */
    if (!gemm_bf16_native())
        printf("SKIP: native vdpbf16ps kernel not run: %s (compiled only)\n",
               cpu_isa_current() != CPU_ISA_V4 ? "the x86-64-v4 kernels are not running"
                                                : "this CPU has no AVX512-BF16");
}

int main(void)
{
    isa_test_setup();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_emulated_equals_vdpbf16ps_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
