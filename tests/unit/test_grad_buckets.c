/* test_grad_buckets.c: the gradient bucket plan of the overlapped allreduce (grad_buckets.h):
 * reverse layer order, DDP's packing (close a bucket once it holds >= the cap, never split a
 * tensor), per-tensor mode, the edge cases (a cap bigger than all gradients, a cap of 0, no
 * tensors, empty tensors, a tensor bigger than the cap), contiguity, and the plan of the real
 * MobileNetV3-small: it covers every parameter once, and the buckets become ready in the order they
 * are launched while net_backward walks the layers (the grads_done hook's calls, in order). */
#include "testutil.h"

#include "../../engine/model/grad_buckets.h"
#include "../../engine/model/mobilenet_v3.h"
#include "../../engine/model/net.h"

#define MB4 (1u << 20)   /* floats in 4 MB */

/* 5 tensors in layer order: sizes in floats, layers 0,1,1,3,4 (layer 2 has no parameters) */
static const struct grad_tensor T5[] = {
    {0, 100, 0}, {100, 50, 1}, {150, 50, 1}, {200, 300, 3}, {500, 10, 4},
};

static void test_packing_reverse_order(void **s)
{
    (void)s;
    struct grad_plan p;
    grad_plan_build(&p, T5, 5, 200 * 4, false);   /* cap 200 floats */
    /* reverse: [500,+10) (10 < cap) + [200,+300) -> 310 >= cap, closed; [150,+50)+[100,+50) = 100,
     * + [0,+100) = 200 >= cap, closed */
    assert_int_equal(p.nb, 2);
    assert_int_equal(p.b[0].off, 200), assert_int_equal(p.b[0].n, 310);
    assert_int_equal(p.b[0].ready_layer, 3), assert_int_equal(p.b[0].ntensors, 2);
    assert_int_equal(p.b[1].off, 0), assert_int_equal(p.b[1].n, 200);
    assert_int_equal(p.b[1].ready_layer, 0), assert_int_equal(p.b[1].ntensors, 3);
    assert_int_equal(p.total, 510);
    grad_plan_free(&p);
    assert_null(p.b);
}

static void test_per_tensor(void **s)
{
    (void)s;
    struct grad_plan p;
    grad_plan_build(&p, T5, 5, 25u << 20, true);   /* the cap does not matter */
    assert_int_equal(p.nb, 5);
    for (int i = 0; i < 5; i++) {   /* launch order is reverse layer order, one tensor each */
        assert_int_equal(p.b[i].off, T5[4 - i].off);
        assert_int_equal(p.b[i].n, T5[4 - i].n);
        assert_int_equal(p.b[i].ready_layer, T5[4 - i].layer);
        assert_int_equal(p.b[i].ntensors, 1);
    }
    grad_plan_free(&p);
}

static void test_edges(void **s)
{
    (void)s;
    struct grad_plan p;
    grad_plan_build(&p, T5, 5, 1u << 30, false);   /* a cap bigger than all gradients: one bucket */
    assert_int_equal(p.nb, 1);
    assert_int_equal(p.b[0].off, 0), assert_int_equal(p.b[0].n, 510), assert_int_equal(p.b[0].ready_layer, 0);
    grad_plan_free(&p);
    grad_plan_build(&p, T5, 5, 0, false);   /* 0 (fuse_grad_size_in_MB = 0): one bucket too */
    assert_int_equal(p.nb, 1), assert_int_equal(p.b[0].n, 510);
    grad_plan_free(&p);
    grad_plan_build(&p, T5, 5, 1, false);   /* a cap smaller than any tensor: one tensor per bucket */
    assert_int_equal(p.nb, 5);
    grad_plan_free(&p);
    grad_plan_build(&p, T5, 0, 4096, false);   /* no tensors: no buckets */
    assert_int_equal(p.nb, 0), assert_int_equal(p.total, 0);
    grad_plan_free(&p);
    /* empty tensors are skipped, first and last included; a tensor bigger than the cap is whole */
    const struct grad_tensor z[] = {{0, 0, 0}, {0, 7, 1}, {7, 0, 2}, {7, 1000, 3}, {1007, 0, 4}};
    grad_plan_build(&p, z, 5, 16 * 4, false);
    assert_int_equal(p.nb, 2);
    assert_int_equal(p.b[0].off, 7), assert_int_equal(p.b[0].n, 1000), assert_int_equal(p.b[0].ready_layer, 3);
    assert_int_equal(p.b[1].off, 0), assert_int_equal(p.b[1].n, 7), assert_int_equal(p.b[1].ready_layer, 1);
    grad_plan_free(&p);
}

static void test_gap_is_a_bug(void **s)
{
    (void)s;
    const struct grad_tensor gap[] = {{0, 10, 0}, {11, 10, 1}};
    struct grad_plan p = {0};
    tipc_set_die_routine(test_die_routine);
    if (setjmp(test_die_jmp) == 0) {
        grad_plan_build(&p, gap, 2, 0, false);
        fail_msg("a gap between tensors was accepted");
    }
    tipc_set_die_routine(NULL);
    assert_int_equal(test_die_code, TIPC_EINTERNAL);
    grad_plan_free(&p);
}

/* the real net: what the hook sees during net_backward's walk */
struct walk { const struct grad_plan *p; int next, calls, last, first_ready; };
static void on_layer(void *ud, int layer)
{
    struct walk *w = ud;
    assert_true(layer < w->last);   /* strictly reverse layer order */
    w->last = layer;
    w->calls++;
    while (w->next < w->p->nb && layer <= w->p->b[w->next].ready_layer) {
        if (w->next == 0) w->first_ready = layer;
        w->next++;
    }
}

static void test_mobilenet_plan(void **s)
{
    (void)s;
    struct net net;
    struct mbv3_config cfg = {.num_classes = 10, .width_mult = 0.25f, .resolution = 32, .dropout = 0.0f};
    const struct backend cpu = {.ops = &backend_cpu_ops};
    mobilenet_v3_small_build(&net, &cfg, 2, cpu);
    struct grad_tensor *t;
    int nt = grad_tensors_of_net(&net, &t);
    size_t cap = 16 * 1024;   /* bytes */
    struct grad_plan p, one, per;
    grad_plan_of_net(&p, &net, cap, false);
    grad_plan_of_net(&one, &net, 0, false);
    grad_plan_of_net(&per, &net, cap, true);
    assert_int_equal(p.total, net.nparams);
    assert_int_equal(one.nb, 1), assert_int_equal(one.b[0].n, net.nparams);
    assert_int_equal(per.nb, nt);
    assert_true(p.nb > 3 && p.nb < nt);
    size_t end = net.nparams;   /* buckets tile the buffer back to front */
    for (int i = 0; i < p.nb; i++) {
        assert_int_equal(p.b[i].off + p.b[i].n, end);
        end = p.b[i].off;
        if (i < p.nb - 1) assert_true(p.b[i].n * 4 >= cap);
        if (i > 0) assert_true(p.b[i].ready_layer < p.b[i - 1].ready_layer);
    }
    assert_int_equal(end, 0);
    /* a forward + backward with the hook: every bucket is ready by the end, in plan order, and the
     * first one well before the walk is over */
    for (size_t i = 0; i < net.nacts; i++) net.acts[i] = (float)((i * 7919) % 13) / 13.0f;
    net_init_params(&net, 1);
    net.train = true;
    int32_t labels[2] = {1, 2};
    net_forward(&net, 2);
    net_loss(&net, labels, 2, 0);
    net_zero_grad(&net);
    struct walk w = {&p, 0, 0, net.nlayers, -1};
    net.grads_done = on_layer, net.grads_done_ud = &w;
    net_backward(&net, 2, 0);
    assert_int_equal(w.calls, net.nlayers);
    assert_int_equal(w.next, p.nb);
    assert_int_equal(w.last, 0);
    assert_true(w.first_ready >= net.nlayers - 8);   /* the classifier's bucket: at once */
    free(t);
    grad_plan_free(&p), grad_plan_free(&one), grad_plan_free(&per);
    net_free(&net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packing_reverse_order), cmocka_unit_test(test_per_tensor),
        cmocka_unit_test(test_edges), cmocka_unit_test(test_gap_is_a_bug), cmocka_unit_test(test_mobilenet_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
