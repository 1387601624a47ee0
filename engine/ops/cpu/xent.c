/* xent.c: softmax cross-entropy with label smoothing (PyTorch's CrossEntropyLoss definition,
 * mean over the batch) and the softmax of inference, CPU reference. */
#include <math.h>

#include "../ops.h"
#include "../../../core/banned.h"

float xent_forward_cpu(struct backend_ctx *cx, float *probs, const float *logits, const int32_t *labels, int N,
                       int K, float eps)
{
    (void)cx;
    double total = 0;
    for (int n = 0; n < N; n++) {
        const float *z = logits + (size_t)n * K;
        float *p = probs + (size_t)n * K;
        float mx = z[0];
        for (int k = 1; k < K; k++) mx = z[k] > mx ? z[k] : mx;
        double s = 0, sumz = 0;
        for (int k = 0; k < K; k++) {
            s += exp((double)z[k] - mx);
            sumz += z[k];
        }
        double lse = mx + log(s);
        for (int k = 0; k < K; k++) p[k] = (float)exp((double)z[k] - lse);
        double nll = lse - z[labels[n]];
        double smooth = lse - sumz / K; /* mean over k of -log p[k] */
        total += (1.0 - eps) * nll + eps * smooth;
    }
    return (float)(total / N);
}

/* the staged step's loss (ops.h): the same, written to *loss */
void xent_forward_dev_cpu(struct backend_ctx *cx, float *probs, float *loss, const float *logits, const int32_t *labels,
                          int N, int K, float eps)
{
    *loss = xent_forward_cpu(cx, probs, logits, labels, N, K, eps);
}

void xent_backward_cpu(struct backend_ctx *cx, float *dlogits, const float *probs, const int32_t *labels, int N,
                       int K, float eps)
{
    (void)cx;
    float inv = 1.0f / (float)N;
    for (int n = 0; n < N; n++) {
        const float *p = probs + (size_t)n * K;
        float *g = dlogits + (size_t)n * K;
        for (int k = 0; k < K; k++) {
            float t = eps / (float)K + (k == labels[n] ? 1.0f - eps : 0.0f);
            g[k] = (p[k] - t) * inv;
        }
    }
}

void softmax_forward_cpu(struct backend_ctx *cx, float *out, const float *in, int N, int K)
{
    (void)cx;
    for (int n = 0; n < N; n++) {
        const float *z = in + (size_t)n * K;
        float *p = out + (size_t)n * K;
        float mx = z[0];
        for (int k = 1; k < K; k++) mx = z[k] > mx ? z[k] : mx;
        double s = 0;
        for (int k = 0; k < K; k++) { /* one exp per class (the last pass of a bs=1 inference) */
            double e = exp((double)z[k] - mx);
            p[k] = (float)e;
            s += e;
        }
        for (int k = 0; k < K; k++) p[k] = (float)((double)p[k] / s);
    }
}

void softmax_forward_part_cpu(float *out, const float *in, int N, int K, int part, int nparts)
{
    int lo, hi;
    part_range_int(N, part, nparts, 1, &lo, &hi);
    if (hi > lo) softmax_forward_cpu(NULL, out + (size_t)lo * K, in + (size_t)lo * K, hi - lo, K);
}
