/* SPDX-License-Identifier: BSD-3-Clause */
/* The overlap of --async-reference: how much of the write's exposed time
 * --async hides, measured against synchronous iterations of the same job.
 * The iterations alternate in ABBA order (run/compute.c), so a drift of the
 * machine over the job falls on both sides alike. Per iteration, the
 * exposed I/O is the sum over its write passes of each pass's time blocked
 * in I/O calls, the slowest rank's; the ratio exposed async / exposed sync
 * is the Hodges-Lehmann ratio with its exact 95% interval (Moses,
 * measure/slowdown.c), the overlap 1 - ratio. Where the data moved is read
 * from the measured post and wait, never assumed per library. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/measure/measure.h"
#include "core/record/record.h"
#include "core/run/run.h"

const char *
iok_overlap_moved(double post, double wait, double window)
{
    if (post + wait < 0.1 * window)
        return "during the computation";
    return wait > post ? "in the wait" : "in the post";
}

/* The sums over iteration it's write passes: exposed, post, wait. */
static void
iteration_sums(const struct iok_result *res, int it, double *exposed, double *post, double *wait)
{
    *exposed = *post = *wait = 0;
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        if (p->op != IOK_OP_WRITE || p->iteration != it)
            continue;
        *exposed += p->io_rank.max;
        *post += p->ph[IOK_PH_POST].rank.max;
        *wait += p->ph[IOK_PH_WAIT].rank.max;
    }
}

/* The steps every iteration's write passes timed: the fewest of any. */
static int
steps_timed(const struct iok_result *res)
{
    int n = -1;
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        if (p->op != IOK_OP_WRITE)
            continue;
        int k = p->step_exposed ? p->nstep_exposed : 0;
        n = n < 0 || k < n ? k : n;
    }
    return n > 0 ? n : 0;
}

/* Step s's time, summed over iteration it's write passes. */
static double
step_sum(const struct iok_result *res, int it, int s)
{
    double t = 0;
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        if (p->op == IOK_OP_WRITE && p->iteration == it && p->step_exposed)
            t += p->step_exposed[s];
    }
    return t;
}

static void
per_step(const struct iok_run *run, const struct iok_result *res, struct iok_overlap *o)
{
    o->nsteps = steps_timed(res);
    if (!o->nsteps)
        return;
    o->step_async = calloc((size_t)o->nsteps, sizeof *o->step_async);
    o->step_sync = calloc((size_t)o->nsteps, sizeof *o->step_sync);
    double *a = calloc((size_t)o->n_async + 1, sizeof *a);
    double *b = calloc((size_t)o->n_sync + 1, sizeof *b);
    if (!o->step_async || !o->step_sync || !a || !b)
        o->nsteps = 0;
    for (int s = 0; s < o->nsteps; s++) {
        for (int i = 0; i < o->n_async; i++)
            a[i] = step_sum(res, o->it_async[i], s);
        for (int i = 0; i < o->n_sync; i++)
            b[i] = step_sum(res, o->it_sync[i], s);
        o->step_async[s] = iok_median(a, o->n_async);
        o->step_sync[s] = iok_median(b, o->n_sync);
    }
    free(a);
    free(b);
    (void)run;
}

/* The ratio, its interval and the call; untested when some side has a
 * time of 0 (no log) or too few iterations for an interval. */
static void
judge(struct iok_overlap *o)
{
    int positive = o->n_async > 0 && o->n_sync > 0;
    for (int i = 0; i < o->n_async; i++)
        positive &= o->exposed_async[i] > 0;
    for (int i = 0; i < o->n_sync; i++)
        positive &= o->exposed_sync[i] > 0;
    o->call = "untested";
    if (!positive)
        return;
    iok_slowdown_of(o->exposed_async, o->n_async, o->exposed_sync, o->n_sync, &o->sd);
    o->has_ratio = 1;
    if (!o->sd.has_interval)
        return;
    double lo = 1 - o->sd.high, hi = 1 - o->sd.low; /* the overlap's interval */
    o->call = lo > 0 ? "hidden" : hi < 0 ? "more exposed" : "no overlap";
}

int
iok_overlap_of(const struct iok_run *run, const struct iok_result *res, struct iok_overlap *o)
{
    memset(o, 0, sizeof *o);
    int n = iok_iterations_run(run->core); /* with the warm-up, iteration 0 */
    o->iterations = run->core->iterations;
    o->it_async = calloc((size_t)n + 1, sizeof *o->it_async);
    o->it_sync = calloc((size_t)n + 1, sizeof *o->it_sync);
    o->exposed_async = calloc((size_t)n + 1, sizeof *o->exposed_async);
    o->exposed_sync = calloc((size_t)n + 1, sizeof *o->exposed_sync);
    double *post = calloc((size_t)n + 1, sizeof *post), *wait = calloc((size_t)n + 1, sizeof *wait);
    if (!o->it_async || !o->it_sync || !o->exposed_async || !o->exposed_sync || !post || !wait) {
        free(post);
        free(wait);
        iok_overlap_free(o);
        return -1;
    }
    for (int it = 1; it < n; it++) { /* after the warm-up */
        double e, ps, w;
        iteration_sums(res, it, &e, &ps, &w);
        if (iok_iteration_async(run->core, it)) {
            post[o->n_async] = ps;
            wait[o->n_async] = w;
            o->it_async[o->n_async] = it;
            o->exposed_async[o->n_async++] = e;
        } else {
            o->it_sync[o->n_sync] = it;
            o->exposed_sync[o->n_sync++] = e;
        }
    }
    o->post = o->n_async ? iok_median(post, o->n_async) : 0;
    o->wait = o->n_async ? iok_median(wait, o->n_async) : 0;
    o->where = o->wait > 0.5 * (o->post + o->wait) ? "wait" : "post";
    free(post);
    free(wait);
    judge(o);
    per_step(run, res, o);
    return 0;
}

void
iok_overlap_free(struct iok_overlap *o)
{
    free(o->it_async);
    free(o->it_sync);
    free(o->exposed_async);
    free(o->exposed_sync);
    free(o->step_async);
    free(o->step_sync);
    memset(o, 0, sizeof *o);
}

/* What the exposed I/O held, for the lines that find no overlap. */
static void
held(const struct iok_overlap *o, char *buf, size_t len)
{
    int in_wait = !strcmp(o->where, "wait");
    snprintf(buf, len, "the %s holds %.3g s of %.3g s exposed I/O in post and wait",
             in_wait ? "wait" : "post", in_wait ? o->wait : o->post, o->post + o->wait);
}

void
iok_overlap_line(const struct iok_overlap *o, char *buf, size_t len)
{
    double ea = iok_median(o->exposed_async, o->n_async);
    double es = iok_median(o->exposed_sync, o->n_sync);
    char h[160];
    held(o, h, sizeof h);
    const char *lib = !strcmp(o->where, "wait") ? "the library writes at completion"
                                                : "the library writes inside its post";
    if (!o->has_ratio) {
        snprintf(buf, len,
                 "overlap: untested (exposed I/O %.3g s with --async against %.3g s "
                 "synchronous, medians: a time of 0 has no ratio; ABBA over %d iterations after a "
                 "warm-up)",
                 ea, es, o->iterations);
        return;
    }
    double r = o->sd.hl;
    if (!o->sd.has_interval) {
        snprintf(buf, len,
                 "overlap: %.2f untested (%d against %d iterations are too few for an interval; "
                 "exposed I/O %.3g s with --async against %.3g s synchronous, medians; ABBA "
                 "over %d iterations after a warm-up)",
                 1 - r, o->n_async, o->n_sync, ea, es, o->iterations);
        return;
    }
    double lo = 1 - o->sd.high, hi = 1 - o->sd.low;
    if (!strcmp(o->call, "hidden"))
        snprintf(buf, len,
                 "overlap: %.2f [%.2f, %.2f] hidden (exposed I/O %.3g s with --async against "
                 "%.3g s synchronous, medians; ABBA over %d iterations after a warm-up)",
                 1 - r, lo, hi, ea, es, o->iterations);
    else if (!strcmp(o->call, "no overlap"))
        snprintf(buf, len,
                 "overlap: %.2f [%.2f, %.2f]: no overlap: %s (%s; ABBA over %d iterations after a "
                 "warm-up)",
                 1 - r, lo, hi, lib, h, o->iterations);
    else
        snprintf(buf, len,
                 "overlap: %.2f [%.2f, %.2f]: more exposed with --async than synchronous "
                 "(exposed I/O %.3g s against %.3g s, medians; %s; ABBA over %d iterations after a "
                 "warm-up)",
                 1 - r, lo, hi, ea, es, h, o->iterations);
}

static json_t *
num_or_null(int known, double v)
{
    return known && isfinite(v) ? json_real(v) : json_null();
}

static json_t *
ints(const int *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *
pair(int known, double a, double b)
{
    return known ? json_pack("[f, f]", a, b) : json_null();
}

json_t *
iok_overlap_json(const struct iok_overlap *o)
{
    const int r = o->has_ratio, ci = r && o->sd.has_interval;
    json_t *j = json_object();
    json_object_set_new(j, "design", json_string("ABBA"));
    json_object_set_new(j, "warmup_iteration", json_integer(0)); /* synchronous, outside */
    json_object_set_new(j, "iterations_async", ints(o->it_async, o->n_async));
    json_object_set_new(j, "iterations_sync", ints(o->it_sync, o->n_sync));
    json_object_set_new(j, "exposed_async_seconds", iok_json_reals(o->exposed_async, o->n_async));
    json_object_set_new(j, "exposed_sync_seconds", iok_json_reals(o->exposed_sync, o->n_sync));
    json_object_set_new(j, "ratio", num_or_null(r, o->sd.hl));
    json_object_set_new(j, "ratio_ci95", pair(ci, o->sd.low, o->sd.high));
    json_object_set_new(j, "overlap", num_or_null(r, 1 - o->sd.hl));
    json_object_set_new(j, "overlap_ci95", pair(ci, 1 - o->sd.high, 1 - o->sd.low));
    json_object_set_new(j, "call", json_string(o->call));
    json_object_set_new(j, "post_seconds", json_real(o->post));
    json_object_set_new(j, "wait_seconds", json_real(o->wait));
    json_object_set_new(j, "where", json_string(o->where));
    if (o->nsteps) {
        json_t *steps = json_array();
        for (int s = 0; s < o->nsteps; s++)
            json_array_append_new(steps,
                                  json_pack("{s:i, s:f, s:f, s:o}", "step", s,
                                            "exposed_async_seconds", o->step_async[s],
                                            "exposed_sync_seconds", o->step_sync[s], "overlap",
                                            num_or_null(o->step_sync[s] > 0,
                                                        1 - o->step_async[s] / o->step_sync[s])));
        json_object_set_new(j, "steps", steps);
    }
    char line[512];
    iok_overlap_line(o, line, sizeof line);
    json_object_set_new(j, "line", json_string(line));
    return j;
}
