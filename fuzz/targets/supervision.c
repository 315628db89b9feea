/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * supervision.c - the supervision tree under fuzzed programs, checked
 * against an independent model of spec/03-context.md and spec/04-tasks.md.
 *
 * INPUT. Bytes 0 and 1 are the run's seed (little endian). The rest is a
 * program for the root task: an opcode byte, then a fixed number of operand
 * bytes (see the table `ops`; a byte past the end reads as 0). Opcodes and operands
 * are taken modulo their range, so every input is a valid program, and an
 * operation that does not apply to the current state (no task to command,
 * no handle to join, a table full) is skipped. At most MAX_OPS run.
 *
 *   op  name     operands         what happens
 *    0  CHILD    actor ctx label  actor derives a context (labels 4-7 may be invalid)
 *    1  SPAWN    actor ctx mode   actor spawns a puppet task from a context
 *    2  RETURN   task value       the task returns a value
 *    3  PANIC    task             the task panics
 *    4  ABORT    handle           the root aborts the handle, then joins it
 *    5  JOIN     handle           the root joins it (a live task: with a timeout)
 *    6  RELEASE  handle           the root releases it
 *    7  SLEEP    actor ms         actor sleeps 0-15 ms (a task: in the background)
 *    8  YIELD    actor count      actor yields 1-4 times (a task: in the background)
 *    9  WAIT     task             the task waits on a new oneshot "gate"
 *   10  NOTIFY   task how         the root opens that task's oldest gate
 *   11  PUSH     task             the task pushes a cleanup handler
 *   12  POP      actor execute    the task pops its newest handler / the root
 *                                 releases its newest stop signal
 *   13  BADPOP   task             the task pops a handler that is not the newest
 *   14  TAKE     actor            actor takes a stop signal (a task: released
 *                                 by a cleanup handler)
 *   15  POLL     actor            actor polls its newest stop signal
 *   16  STOP     value timeout    the root calls cw_stop(value, 10-40 ms)
 *   17  READY    result value     the root makes a ready-made handle
 *   18  RELCTX   ctx              the root releases a context of the pool
 *
 * An "actor" operand picks the root (0) or one of the tasks that can take
 * the command; a "task" operand picks among the tasks it applies to; "ctx"
 * picks among the actor's own context and the pool of contexts made by
 * CHILD, which any actor may use; "handle" picks among the handles held.
 *
 * PUPPETS. Every spawned task runs `puppet`: it reads commands from its
 * mailbox (an unbounded channel) and carries them out. For every command
 * but SLEEP, YIELD and WAIT, the root waits for the task's answer before it
 * goes on, so nothing happens behind the root's back and each operation has
 * exactly one correct outcome whatever schedule the seed picks. Tasks are
 * coroutines on one thread: a task told to return or panic answers first
 * and then ends before any other task runs, so when the root reads the
 * answer the end and its cascade have happened. An abort only takes effect
 * at the task's next suspension point, so the root joins after aborting.
 *
 * THE MODEL (struct model) knows nothing of the runtime's code:
 *   - each context has a node: its parent, an aborted flag, the task it
 *     owns (the one spawned from that context) and its label segment;
 *   - a spawn from a context makes its node the new task's owner and gives
 *     the task a node of its own below it; from an aborted node it is
 *     refused and its handle resolves CW_ERR_CLOSED;
 *   - a task that ends (returns, panics, is aborted) aborts its owner node
 *     and everything below it: the nodes become aborted and each live task
 *     owned there ends CW_ERR_CLOSED; nodes made below an aborted node start
 *     aborted;
 *   - cleanup handlers run newest first when a task panics, is aborted or
 *     is left at the end of the run, never when it returns; a suspending
 *     call inside one fails at once with CW_ERR_CLOSED;
 *   - a stop signal taken before the first stop holds cw_stop back until
 *     it is released; one taken later holds nothing; polls see the first
 *     stop's value.
 * Every join is compared with the model (a live task's join must time
 * out), and so are labels, signal polls, stop results and, once the run is
 * over, the cleanup handlers each task ran. The run must end CW_OK with the
 * root's value, and a second run of the same input must give the same audit
 * digest. Any difference aborts the process with a message.
 *
 * SUPERVISION_TRACE=1 in the environment prints each operation.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cwrt/cwrt.h"
#define FUZZ_TARGET_NEEDS (0u)
#include "driver/candidate.h"
#include "driver/target.h"

enum {
    MAX_OPS = 256,
    MAX_TASKS = 64,
    MAX_HANDLES = 96,
    MAX_POOL = 32,    /* contexts made by CHILD and not yet used up */
    MAX_HANDLERS = 6, /* cleanup handlers registered at once, per task */
    MAX_GATES = 4,    /* gates not yet opened, per task */
    MAX_ROOT_SIGNALS = 8,
    MAX_NODES = 1 + MAX_OPS + MAX_TASKS, /* the root's, one per op, one per task */
    LABEL_MAX = 8 * MAX_OPS + 8,
};

#define ROOT (-1) /* an actor: the root task */
#define NONE (-2) /* nothing to pick */
#define ROOT_VALUE ((void *)(uintptr_t)0x5eed)
#define PATIENCE (3600 * CW_SEC) /* virtual time: only a lost answer takes this long */

enum op {
    OP_CHILD,
    OP_SPAWN,
    OP_RETURN,
    OP_PANIC,
    OP_ABORT,
    OP_JOIN,
    OP_RELEASE,
    OP_SLEEP,
    OP_YIELD,
    OP_WAIT,
    OP_NOTIFY,
    OP_PUSH,
    OP_POP,
    OP_BADPOP,
    OP_TAKE,
    OP_POLL,
    OP_STOP,
    OP_READY,
    OP_RELCTX,
    NOPS
};

/* Four good labels, then an empty one, a bad first character, a bad
 * character, and one that is reserved only directly below the root. */
static const char *const labels[8] = {"a", "b", "c", "d", "", "7up", "a-b", "runtime"};

static const int ready_results[4] = {CW_OK, CW_ERR_EXITED, CW_ERR_CLOSED, CW_ERR_TIMEOUT};

/* ---- The model ------------------------------------------------------------ */

struct mnode {
    int parent; /* -1 for the root's node */
    bool aborted;
    int task;    /* the task spawned from this node's context, or -1 */
    char seg[8]; /* the label given to cw_child; "" for the root and task nodes */
};

struct mtask {
    int owner, node;
    bool has_ctx; /* its own context is still unspent */
    bool done;    /* ended, or aborted and bound to end CW_ERR_CLOSED */
    int result;
    uintptr_t value;
    int handlers[MAX_HANDLERS]; /* handler ids, oldest first */
    int nhandlers;
    int gates; /* gates sent to it and not yet opened */
};

struct msignal {
    bool holds; /* taken before the first stop */
    bool released;
};

/* A handler that ran: which task, which handler. */
struct ran {
    int task, id;
};

static struct model {
    struct mnode node[MAX_NODES];
    int nnodes;
    struct mtask task[MAX_TASKS];
    int ntasks;
    int signal_of[MAX_OPS + 1]; /* handler id -> signal, or -1 */
    int nids;
    struct msignal signal[MAX_OPS];
    int nsignals;
    bool stopped;
    int32_t stop_value;
    struct ran expect[MAX_OPS]; /* the handlers that must run, in order per task */
    int nexpect;
} M;

static int model_node(int parent, const char *seg)
{
    int n = M.nnodes++;
    M.node[n].parent = parent;
    M.node[n].aborted = parent >= 0 && M.node[parent].aborted;
    M.node[n].task = -1;
    snprintf(M.node[n].seg, sizeof M.node[n].seg, "%s", seg);
    return n;
}

/* The label path of node n: the segments from the root down, joined by
 * '_'. A task's node has no segment: it carries its owner's label. */
static const char *model_label(int n)
{
    static char buf[LABEL_MAX];
    int chain[MAX_NODES], len = 0;
    for (int i = n; i >= 0; i = M.node[i].parent)
        if (M.node[i].seg[0])
            chain[len++] = i;
    size_t used = 0;
    buf[0] = '\0';
    while (len-- > 0)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", used ? "_" : "",
                                 M.node[chain[len]].seg);
    return buf;
}

/* [CTX-002], [CTX-003]: would cw_child(ctx of node parent, label) panic? */
static bool model_label_ok(int parent, const char *label)
{
    const char *c = label;
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
        return false;
    for (c++; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_'))
            return false;
    const char *prefix = model_label(parent);
    char joined[LABEL_MAX + 16];
    snprintf(joined, sizeof joined, "%s%s%s", prefix, *prefix ? "_" : "", label);
    return strncmp(joined, "runtime", 7) != 0;
}

static int model_signal(void)
{
    int s = M.nsignals++;
    M.signal[s].holds = !M.stopped;
    return s;
}

static int model_outstanding(void)
{
    int n = 0;
    for (int s = 0; s < M.nsignals; s++)
        n += M.signal[s].holds && !M.signal[s].released;
    return n;
}

/* Run task t's handlers, newest first, as its unwinding does. */
static void model_unwind(int t)
{
    struct mtask *mt = &M.task[t];
    while (mt->nhandlers > 0) {
        int id = mt->handlers[--mt->nhandlers];
        M.expect[M.nexpect++] = (struct ran){t, id};
        if (M.signal_of[id] >= 0)
            M.signal[M.signal_of[id]].released = true;
    }
}

/* The spawn of a task from the context of node n: its index, or -1 when
 * the spawn is refused ([CTX-005]). */
static int model_spawn(int n)
{
    if (M.node[n].aborted)
        return -1;
    int t = M.ntasks++;
    M.task[t] = (struct mtask){.owner = n, .has_ctx = true};
    M.task[t].node = model_node(n, "");
    M.node[n].task = t;
    return t;
}

/* Abort node n and everything below it. Nodes only ever get parents made
 * before them, so one pass in creation order finds the whole subtree. A
 * task ended here would in turn abort its own owner's subtree, but that
 * node lies inside this one already. */
static void model_abort(int n)
{
    bool below[MAX_NODES] = {false};
    below[n] = true;
    for (int i = n; i < M.nnodes; i++) {
        if (i != n && !(M.node[i].parent >= 0 && below[M.node[i].parent]))
            continue;
        below[i] = true;
        M.node[i].aborted = true;
        int t = M.node[i].task;
        if (t >= 0 && !M.task[t].done) {
            M.task[t].done = true;
            M.task[t].result = CW_ERR_CLOSED;
            M.task[t].has_ctx = false;
            model_unwind(t);
        }
    }
}

/* Task t ends with `result` [TASK-002], [TASK-004], [PAN-002]. */
static void model_end(int t, int result, uintptr_t value)
{
    struct mtask *mt = &M.task[t];
    mt->done = true;
    mt->result = result;
    mt->value = result == CW_OK ? value : 0;
    mt->has_ctx = false; /* the runtime releases the task's own context */
    if (result == CW_OK)
        mt->nhandlers = 0; /* still registered at a return: never run [PAN-004] */
    else
        model_unwind(t);
    model_abort(mt->owner);
}

/* ---- The world: what the root and the puppets share ------------------------- */

enum cmd_op {
    CMD_CHILD,
    CMD_SPAWN,
    CMD_RETURN,
    CMD_PANIC,
    CMD_SLEEP,
    CMD_YIELD,
    CMD_WAIT,
    CMD_PUSH,
    CMD_POP,
    CMD_BADPOP,
    CMD_TAKE,
    CMD_POLL
};

struct task;

/* A oneshot a task waits on until the root opens it. */
struct gate {
    cw_oneshot *oneshot;
    int expect_rc, expect_value; /* set by the root just before it opens the gate */
};

struct cmd {
    enum cmd_op op;
    int arg;
    bool own;           /* CHILD, SPAWN: from the task's own context */
    cw_ctx *ctx;        /* CHILD, SPAWN: else from this one */
    const char *label;  /* CHILD */
    bool expect_panic;  /* CHILD: the label is invalid */
    int mode;           /* SPAWN: execution mode */
    struct task *spawn; /* SPAWN: the new task's state, NULL if refused */
    struct gate *gate;  /* WAIT */
};

/* A puppet's answer to a command: who answers, and a result for POLL. */
struct answer {
    int task;
    int rc;
    int32_t value;
};

/* A cleanup handler's argument. */
struct handler {
    struct task *task;
    int id;
    cw_signal *signal; /* released by the handler, or NULL */
};

/* A puppet's state, shared with the root. */
struct task {
    int index;
    cw_chan *mailbox;
    cw_ctx *ctx;  /* its own context, NULL once spent */
    bool popping; /* a handler runs from cw_cleanup_pop, not from unwinding */
    struct handler handlers[MAX_HANDLERS];
    int nhandlers;
    int gate[MAX_GATES]; /* the root's queue of gates to open, oldest first */
    int ngates;
};

enum handle_kind { H_TASK, H_REFUSED, H_READY };

/* A handle the root holds, and what the model needs to predict its join. */
struct hslot {
    cw_handle *h;
    enum handle_kind kind;
    int task;        /* H_TASK */
    int result;      /* H_READY */
    uintptr_t value; /* H_READY */
    bool aborted;    /* H_READY */
};

/* A context of the pool, and its node in the model. */
struct pslot {
    cw_ctx *ctx;
    int node;
};

static struct world {
    int op; /* the operation running, for messages */
    bool trace;
    cw_ctx *root_ctx;
    cw_chan *answers;
    struct task task[MAX_TASKS];
    struct hslot handle[MAX_HANDLES];
    int nhandles;
    struct pslot pool[MAX_POOL];
    int npool;
    struct gate gates[MAX_OPS];
    int ngates;
    cw_signal *root_signal[MAX_ROOT_SIGNALS];
    int root_signal_id[MAX_ROOT_SIGNALS];
    int nroot_signals;
    struct ran ran[MAX_OPS]; /* the handlers that did run */
    int nran;
    cw_ctx *made;       /* a puppet's result for CHILD */
    cw_handle *spawned; /* a puppet's result for SPAWN */
} W;

static _Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Report a difference from the model, or a broken expectation, and stop. */
static _Noreturn void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "supervision: op %d: ", W.op);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* One line of the trace, when SUPERVISION_TRACE is set. */
static void note(const char *fmt, ...)
{
    if (!W.trace)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  op %d: ", W.op);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void expect_label(cw_ctx *ctx, int node, const char *what)
{
    const char *want = model_label(node);
    if (strcmp(cw_label(ctx), want) != 0)
        fail("%s: label \"%s\", expected \"%s\" [CTX-001]", what, cw_label(ctx), want);
}

/* ---- Puppets ------------------------------------------------------------------ */

static void answer(struct task *t, int rc, int32_t value)
{
    struct answer a = {t->index, rc, value};
    int r = cw_chan_send(W.answers, &a);
    if (r != CW_OK)
        fail("task %d: answering: %s", t->index, cw_strerror(r));
}

static void run_handler(void *arg)
{
    struct handler *h = arg;
    struct task *t = h->task;
    if (W.nran == MAX_OPS)
        fail("task %d: more handlers ran than were pushed", t->index);
    W.ran[W.nran++] = (struct ran){t->index, h->id};
    if (!t->popping && t->ctx) {
        int rc = cw_sleep(t->ctx, CW_MSEC);
        if (rc != CW_ERR_CLOSED)
            fail("task %d: sleep in an unwinding handler gave %s, expected closed [PAN-005]",
                 t->index, cw_strerror(rc));
    }
    if (h->signal)
        cw_signal_release(h->signal);
}

static void push_handler(struct task *t, cw_cleanup *record, int id, cw_signal *signal)
{
    struct handler *h = &t->handlers[t->nhandlers++];
    *h = (struct handler){t, id, signal};
    cw_cleanup_push(t->ctx, record, run_handler, h);
}

static int32_t poll_signal(cw_signal *s, int *rc)
{
    int32_t value = 0;
    cw_wait w = cw_wait_signal(s, &value);
    int i = cw_poll(&w, 1);
    *rc = i < 0 ? i : w.result;
    return value;
}

static void *puppet(cw_ctx *ctx, void *arg);

static cw_handle *spawn(cw_ctx *from, int mode, struct task *t)
{
    if (mode == 2)
        cw_dedicated(from);
    else
        cw_shared(from, mode == 1);
    cw_handle *h = cw_spawn(from, puppet, t);
    if (!h)
        fail("cw_spawn returned NULL");
    return h;
}

static void *puppet(cw_ctx *ctx, void *arg)
{
    struct task *t = arg;
    cw_cleanup records[MAX_HANDLERS]; /* handler records live in the task's frame */
    if (!t)
        fail("a task spawned from an aborted context ran [CTX-005]");
    t->ctx = ctx;
    expect_label(ctx, M.task[t->index].node, "a task's own context");
    for (;;) {
        struct cmd c;
        int rc = cw_chan_recv(t->mailbox, &c);
        if (rc != CW_OK)
            fail("task %d: mailbox: %s", t->index, cw_strerror(rc));
        switch (c.op) {
        case CMD_CHILD:
            if (c.expect_panic)
                answer(t, 0, 0);
            W.made = cw_child(c.own ? t->ctx : c.ctx, c.label);
            if (c.expect_panic)
                fail("task %d: cw_child(\"%s\") did not panic [CTX-002]", t->index, c.label);
            answer(t, 0, 0);
            break;
        case CMD_SPAWN:
            W.spawned = spawn(c.own ? t->ctx : c.ctx, c.mode, c.spawn);
            if (c.own)
                t->ctx = NULL;
            answer(t, 0, 0);
            break;
        case CMD_RETURN:
            answer(t, 0, 0);
            return (void *)(uintptr_t)c.arg;
        case CMD_PANIC:
            answer(t, 0, 0);
            cw_panic(t->ctx, "task %d panics as told", t->index);
        case CMD_SLEEP:
            rc = cw_sleep(t->ctx, (cw_duration)c.arg * CW_MSEC);
            if (rc != CW_OK)
                fail("task %d: sleep: %s", t->index, cw_strerror(rc));
            break;
        case CMD_YIELD:
            for (int i = 0; i < c.arg; i++)
                cw_yield(t->ctx);
            break;
        case CMD_WAIT: {
            int value = -1;
            rc = cw_oneshot_recv(c.gate->oneshot, &value);
            if (rc != c.gate->expect_rc || (rc == CW_OK && value != c.gate->expect_value))
                fail("task %d: gate gave %s/%d, expected %s/%d", t->index, cw_strerror(rc), value,
                     cw_strerror(c.gate->expect_rc), c.gate->expect_value);
            break;
        }
        case CMD_PUSH:
            push_handler(t, &records[t->nhandlers], c.arg, NULL);
            answer(t, 0, 0);
            break;
        case CMD_TAKE:
            push_handler(t, &records[t->nhandlers], c.arg, cw_stopped(t->ctx));
            answer(t, 0, 0);
            break;
        case CMD_POP:
            t->nhandlers--;
            t->popping = true;
            cw_cleanup_pop(t->ctx, &records[t->nhandlers], c.arg);
            t->popping = false;
            answer(t, 0, 0);
            break;
        case CMD_BADPOP:
            answer(t, 0, 0);
            cw_cleanup_pop(t->ctx, &records[0], true);
            fail("task %d: popping the oldest of %d handlers did not panic [PAN-004]", t->index,
                 t->nhandlers);
        case CMD_POLL: {
            int i = t->nhandlers - 1;
            while (i >= 0 && !t->handlers[i].signal)
                i--;
            if (i < 0)
                fail("task %d: no signal to poll", t->index);
            int32_t value = poll_signal(t->handlers[i].signal, &rc);
            answer(t, rc, value);
            break;
        }
        }
    }
}

/* ---- The root's side ------------------------------------------------------------ */

static void post(int t, struct cmd c)
{
    int rc = cw_chan_send(W.task[t].mailbox, &c);
    if (rc != CW_OK)
        fail("sending to task %d: %s", t, cw_strerror(rc));
}

static struct answer command(int t, struct cmd c)
{
    post(t, c);
    struct answer a = {-1, 0, 0};
    cw_wait w = cw_wait_recv(W.answers, &a);
    int rc = cw_timeout(W.root_ctx, PATIENCE, &w);
    if (rc != CW_OK)
        fail("task %d did not answer command %d: %s", t, (int)c.op, cw_strerror(rc));
    if (a.task != t)
        fail("answer from task %d, expected one from task %d", a.task, t);
    return a;
}

typedef bool (*task_pred)(int t);

static bool can_answer(int t)
{
    return !M.task[t].done && M.task[t].gates == 0;
}

static bool can_answer_ctx(int t)
{
    return can_answer(t) && M.task[t].has_ctx;
}

static bool can_push(int t)
{
    return can_answer_ctx(t) && M.task[t].nhandlers < MAX_HANDLERS;
}

static bool can_pop(int t)
{
    return can_answer_ctx(t) && M.task[t].nhandlers > 0;
}

static bool can_badpop(int t)
{
    return can_answer_ctx(t) && M.task[t].nhandlers >= 2;
}

static int newest_signal(int t)
{
    for (int i = M.task[t].nhandlers - 1; i >= 0; i--)
        if (M.signal_of[M.task[t].handlers[i]] >= 0)
            return M.signal_of[M.task[t].handlers[i]];
    return -1;
}

static bool can_poll(int t)
{
    return can_answer_ctx(t) && newest_signal(t) >= 0;
}

static bool can_busy(int t)
{
    return !M.task[t].done && M.task[t].has_ctx;
}

static bool can_wait(int t)
{
    return !M.task[t].done && M.task[t].gates < MAX_GATES;
}

static bool has_gate(int t)
{
    return W.task[t].ngates > 0;
}

/* The b-th (modulo) of the tasks that satisfy ok, the root first when
 * root_too; NONE when there is none. */
static int pick(uint8_t b, task_pred ok, bool root_too)
{
    int n = root_too;
    for (int t = 0; t < M.ntasks; t++)
        n += ok(t);
    if (n == 0)
        return NONE;
    int k = b % n;
    if (root_too && k-- == 0)
        return ROOT;
    for (int t = 0; t < M.ntasks; t++)
        if (ok(t) && k-- == 0)
            return t;
    return NONE;
}

static struct pslot pool_take(int i)
{
    struct pslot s = W.pool[i];
    memmove(&W.pool[i], &W.pool[i + 1], (size_t)(W.npool - i - 1) * sizeof W.pool[0]);
    W.npool--;
    return s;
}

static void add_handle(struct hslot s)
{
    W.handle[W.nhandles++] = s;
}

/* What joining s must give, or false while its task is alive. */
static bool expected_join(const struct hslot *s, int *result, uintptr_t *value)
{
    *value = 0;
    switch (s->kind) {
    case H_REFUSED:
        *result = CW_ERR_CLOSED;
        return true;
    case H_READY:
        *result = s->aborted ? CW_ERR_ABORTED : s->result;
        *value = *result == CW_OK ? s->value : 0;
        return true;
    case H_TASK:
        if (!M.task[s->task].done)
            return false;
        *result = M.task[s->task].result;
        *value = M.task[s->task].value;
        return true;
    }
    return false;
}

static void check_join(const struct hslot *s, const char *why)
{
    int want;
    uintptr_t want_value;
    if (!expected_join(s, &want, &want_value))
        fail("%s: no expectation for a live task", why);
    void *got = NULL;
    int rc = cw_join(s->h, &got);
    if (rc != want)
        fail("%s: join of %s %d gave %s, expected %s", why,
             s->kind == H_READY ? "ready handle" : "task", s->task, cw_strerror(rc),
             cw_strerror(want));
    if (rc == CW_OK && (uintptr_t)got != want_value)
        fail("%s: join of task %d gave value %#lx, expected %#lx", why, s->task,
             (unsigned long)(uintptr_t)got, (unsigned long)want_value);
}

/* ---- Operations --------------------------------------------------------------------- */

static void op_child(cw_ctx *ctx, const uint8_t *a)
{
    if (W.npool == MAX_POOL)
        return;
    int actor = pick(a[0], can_answer, true);
    bool own = actor == ROOT || M.task[actor].has_ctx;
    int n = own + W.npool;
    if (n == 0)
        return;
    int i = a[1] % n;
    int parent = own && i == 0 ? (actor == ROOT ? 0 : M.task[actor].node) : W.pool[i - own].node;
    cw_ctx *from = own && i == 0 ? (actor == ROOT ? ctx : NULL) : W.pool[i - own].ctx;
    const char *label = labels[a[2] % 8];
    if (actor == ROOT && !model_label_ok(parent, label))
        label = "a"; /* a panic of the root would end the run */
    if (!model_label_ok(parent, label)) {
        note("task %d: cw_child(node %d, \"%s\") must panic", actor, parent, label);
        command(actor, (struct cmd){.op = CMD_CHILD,
                                    .own = from == NULL,
                                    .ctx = from,
                                    .label = label,
                                    .expect_panic = true});
        model_end(actor, CW_ERR_EXITED, 0);
        return;
    }
    int node = model_node(parent, label);
    note("%s%d: child \"%s\" of node %d -> node %d%s", actor == ROOT ? "root" : "task ",
         actor == ROOT ? 0 : actor, label, parent, node, M.node[node].aborted ? " (aborted)" : "");
    cw_ctx *made;
    if (actor == ROOT) {
        made = cw_child(from, label);
    } else {
        command(actor,
                (struct cmd){.op = CMD_CHILD, .own = from == NULL, .ctx = from, .label = label});
        made = W.made;
    }
    expect_label(made, node, "cw_child");
    W.pool[W.npool++] = (struct pslot){made, node};
}

static void op_spawn(cw_ctx *ctx, const uint8_t *a)
{
    if (M.ntasks == MAX_TASKS || W.nhandles == MAX_HANDLES)
        return;
    int actor = pick(a[0], can_answer, true);
    /* A task may spend its own context; the root may not (it needs its
     * own), so it may spawn from a fresh child instead. */
    bool own = actor != ROOT && M.task[actor].has_ctx;
    bool fresh = actor == ROOT;
    int n = own + W.npool + fresh;
    if (n == 0)
        return;
    int i = a[1] % n;
    int from_node;
    cw_ctx *from = NULL;
    if (own && i == 0) {
        from_node = M.task[actor].node;
        M.task[actor].has_ctx = false;
    } else if (i - own < W.npool) {
        struct pslot s = pool_take(i - own);
        from_node = s.node;
        from = s.ctx;
    } else {
        from_node = model_node(0, "s");
        from = cw_child(ctx, "s");
        expect_label(from, from_node, "cw_child");
    }
    int t = model_spawn(from_node);
    note("%s%d: spawn from node %d -> %s %d", actor == ROOT ? "root" : "task ",
         actor == ROOT ? 0 : actor, from_node, t >= 0 ? "task" : "refused", t);
    struct task *st = NULL;
    if (t >= 0) {
        st = &W.task[t];
        st->index = t;
        st->mailbox = cw_chan_new(ctx, sizeof(struct cmd), 0);
        if (!st->mailbox)
            fail("cw_chan_new returned NULL");
    }
    cw_handle *h;
    if (actor == ROOT) {
        h = spawn(from, a[2] % 3, st);
    } else {
        command(
            actor,
            (struct cmd){
                .op = CMD_SPAWN, .own = from == NULL, .ctx = from, .mode = a[2] % 3, .spawn = st});
        h = W.spawned;
    }
    add_handle((struct hslot){h, t >= 0 ? H_TASK : H_REFUSED, t, 0, 0, false});
}

static void op_return(cw_ctx *ctx, const uint8_t *a)
{
    (void)ctx;
    int t = pick(a[0], can_answer, false);
    if (t == NONE)
        return;
    uintptr_t value = (uintptr_t)(t + 1) << 8 | a[1];
    note("task %d returns %#lx", t, (unsigned long)value);
    command(t, (struct cmd){.op = CMD_RETURN, .arg = (int)value});
    model_end(t, CW_OK, value);
}

static void op_panic(cw_ctx *ctx, const uint8_t *a)
{
    (void)ctx;
    int t = pick(a[0], can_answer_ctx, false);
    if (t == NONE)
        return;
    note("task %d panics", t);
    command(t, (struct cmd){.op = CMD_PANIC});
    model_end(t, CW_ERR_EXITED, 0);
}

static void op_abort(cw_ctx *ctx, const uint8_t *a)
{
    (void)ctx;
    if (W.nhandles == 0)
        return;
    struct hslot *s = &W.handle[a[0] % W.nhandles];
    note("abort handle %d (task %d)", a[0] % W.nhandles, s->task);
    if (s->kind == H_TASK && !M.task[s->task].done)
        model_end(s->task, CW_ERR_CLOSED, 0);
    if (s->kind == H_READY)
        s->aborted = true;
    cw_abort(s->h);
    check_join(s, "abort");
}

static void op_join(cw_ctx *ctx, const uint8_t *a)
{
    if (W.nhandles == 0)
        return;
    struct hslot *s = &W.handle[a[0] % W.nhandles];
    int want;
    uintptr_t value;
    if (expected_join(s, &want, &value)) {
        note("join handle %d: %s", a[0] % W.nhandles, cw_strerror(want));
        check_join(s, "join");
        return;
    }
    /* A live task ends only when told to, and nobody tells it now. */
    note("join handle %d (live task %d) must time out", a[0] % W.nhandles, s->task);
    cw_wait w = cw_wait_join(s->h, NULL);
    int rc = cw_timeout(ctx, CW_MSEC, &w);
    if (rc != CW_ERR_TIMEOUT)
        fail("join of live task %d gave %s, expected timeout", s->task, cw_strerror(rc));
}

static void op_release(cw_ctx *ctx, const uint8_t *a)
{
    (void)ctx;
    if (W.nhandles == 0)
        return;
    int i = a[0] % W.nhandles;
    note("release handle %d", i);
    cw_handle_release(W.handle[i].h);
    memmove(&W.handle[i], &W.handle[i + 1], (size_t)(W.nhandles - i - 1) * sizeof W.handle[0]);
    W.nhandles--;
}

static void op_sleep(cw_ctx *ctx, const uint8_t *a)
{
    int actor = pick(a[0], can_busy, true);
    int ms = a[1] % 16;
    note("%s%d sleeps %d ms", actor == ROOT ? "root" : "task ", actor == ROOT ? 0 : actor, ms);
    if (actor != ROOT) {
        post(actor, (struct cmd){.op = CMD_SLEEP, .arg = ms});
        return;
    }
    int rc = cw_sleep(ctx, (cw_duration)ms * CW_MSEC);
    if (rc != CW_OK)
        fail("root: sleep: %s", cw_strerror(rc));
}

static void op_yield(cw_ctx *ctx, const uint8_t *a)
{
    int actor = pick(a[0], can_busy, true);
    int n = a[1] % 4 + 1;
    note("%s%d yields %d times", actor == ROOT ? "root" : "task ", actor == ROOT ? 0 : actor, n);
    if (actor != ROOT) {
        post(actor, (struct cmd){.op = CMD_YIELD, .arg = n});
        return;
    }
    for (int i = 0; i < n; i++)
        cw_yield(ctx);
}

static void op_wait(cw_ctx *ctx, const uint8_t *a)
{
    int t = pick(a[0], can_wait, false);
    if (t == NONE)
        return;
    int g = W.ngates++;
    W.gates[g].oneshot = cw_oneshot_new(ctx, sizeof(int));
    if (!W.gates[g].oneshot)
        fail("cw_oneshot_new returned NULL");
    W.task[t].gate[W.task[t].ngates++] = g;
    M.task[t].gates++;
    note("task %d waits on gate %d", t, g);
    post(t, (struct cmd){.op = CMD_WAIT, .gate = &W.gates[g]});
}

static void op_notify(cw_ctx *ctx, const uint8_t *a)
{
    (void)ctx;
    int t = pick(a[0], has_gate, false);
    if (t == NONE)
        return;
    struct task *st = &W.task[t];
    struct gate *g = &W.gates[st->gate[0]];
    memmove(&st->gate[0], &st->gate[1], (size_t)(st->ngates - 1) * sizeof st->gate[0]);
    st->ngates--;
    M.task[t].gates--;
    if (a[1] & 1) {
        g->expect_rc = CW_OK;
        g->expect_value = a[1] >> 1;
        note("open gate of task %d with %d", t, g->expect_value);
        int rc = cw_oneshot_send(g->oneshot, &g->expect_value);
        if (rc != CW_OK)
            fail("gate of task %d: send gave %s", t, cw_strerror(rc));
    } else {
        g->expect_rc = CW_ERR_CLOSED;
        note("close gate of task %d", t);
        cw_oneshot_sender_drop(g->oneshot);
    }
}

static void op_push(cw_ctx *ctx, const uint8_t *a)
{
    (void)ctx;
    int t = pick(a[0], can_push, false);
    if (t == NONE)
        return;
    int id = ++M.nids;
    M.signal_of[id] = -1;
    M.task[t].handlers[M.task[t].nhandlers++] = id;
    note("task %d pushes handler %d", t, id);
    command(t, (struct cmd){.op = CMD_PUSH, .arg = id});
}

static void op_pop(cw_ctx *ctx, const uint8_t *a)
{
    (void)ctx;
    int actor = pick(a[0], can_pop, W.nroot_signals > 0);
    if (actor == NONE)
        return;
    if (actor == ROOT) {
        int i = --W.nroot_signals;
        note("root releases signal %d", W.root_signal_id[i]);
        M.signal[W.root_signal_id[i]].released = true;
        cw_signal_release(W.root_signal[i]);
        return;
    }
    struct mtask *mt = &M.task[actor];
    int id = mt->handlers[--mt->nhandlers];
    bool execute = a[1] & 1;
    note("task %d pops handler %d%s", actor, id, execute ? " and runs it" : "");
    if (execute) {
        M.expect[M.nexpect++] = (struct ran){actor, id};
        if (M.signal_of[id] >= 0)
            M.signal[M.signal_of[id]].released = true;
    }
    command(actor, (struct cmd){.op = CMD_POP, .arg = execute});
}

static void op_badpop(cw_ctx *ctx, const uint8_t *a)
{
    (void)ctx;
    int t = pick(a[0], can_badpop, false);
    if (t == NONE)
        return;
    note("task %d pops its oldest handler: must panic", t);
    command(t, (struct cmd){.op = CMD_BADPOP});
    model_end(t, CW_ERR_EXITED, 0);
}

static void op_take(cw_ctx *ctx, const uint8_t *a)
{
    int actor = pick(a[0], can_push, W.nroot_signals < MAX_ROOT_SIGNALS);
    if (actor == NONE)
        return;
    int s = model_signal();
    note("%s%d takes signal %d%s", actor == ROOT ? "root" : "task ", actor == ROOT ? 0 : actor, s,
         M.signal[s].holds ? "" : " (after the stop)");
    if (actor == ROOT) {
        W.root_signal_id[W.nroot_signals] = s;
        W.root_signal[W.nroot_signals++] = cw_stopped(ctx);
        return;
    }
    int id = ++M.nids;
    M.signal_of[id] = s;
    M.task[actor].handlers[M.task[actor].nhandlers++] = id;
    command(actor, (struct cmd){.op = CMD_TAKE, .arg = id});
}

static void op_poll(cw_ctx *ctx, const uint8_t *a)
{
    (void)ctx;
    int actor = pick(a[0], can_poll, W.nroot_signals > 0);
    if (actor == NONE)
        return;
    int rc;
    int32_t value;
    if (actor == ROOT) {
        value = poll_signal(W.root_signal[W.nroot_signals - 1], &rc);
    } else {
        struct answer ans = command(actor, (struct cmd){.op = CMD_POLL});
        rc = ans.rc;
        value = ans.value;
    }
    int want = M.stopped ? CW_OK : CW_ERR_WOULD_BLOCK;
    note("%s%d polls its signal: %s", actor == ROOT ? "root" : "task ", actor == ROOT ? 0 : actor,
         cw_strerror(want));
    if (rc != want || (rc == CW_OK && value != M.stop_value))
        fail("signal poll gave %s/%d, expected %s/%d [SIG-001]", cw_strerror(rc), (int)value,
             cw_strerror(want), (int)M.stop_value);
}

static void op_stop(cw_ctx *ctx, const uint8_t *a)
{
    int32_t value = (int8_t)a[0];
    cw_duration timeout = (cw_duration)(a[1] % 4 + 1) * 10 * CW_MSEC;
    if (!M.stopped) {
        M.stopped = true;
        M.stop_value = value;
    }
    /* Tasks only act when told to, so a signal held now is held until the
     * timeout; signals of aborted tasks are released as they unwind, long
     * before it. */
    int want = model_outstanding() ? CW_ERR_TIMEOUT : CW_OK;
    note("stop(%d, %d ms): %s", (int)value, (int)(timeout / CW_MSEC), cw_strerror(want));
    int rc = cw_stop(ctx, value, timeout);
    if (rc != want)
        fail("stop gave %s, expected %s with %d signals held [SIG-002]", cw_strerror(rc),
             cw_strerror(want), model_outstanding());
}

static void op_ready(cw_ctx *ctx, const uint8_t *a)
{
    if (W.nhandles == MAX_HANDLES)
        return;
    int result = ready_results[a[0] % 4];
    uintptr_t value = 0x100u | a[1];
    note("ready handle %s/%#lx", cw_strerror(result), (unsigned long)value);
    cw_handle *h = cw_handle_ready(ctx, result, (void *)value);
    add_handle((struct hslot){h, H_READY, -1, result, value, false});
}

static void op_relctx(cw_ctx *ctx, const uint8_t *a)
{
    (void)ctx;
    if (W.npool == 0)
        return;
    struct pslot s = pool_take(a[0] % W.npool);
    note("release context of node %d", s.node);
    cw_ctx_release(s.ctx);
}

/* The operations by opcode: name (for traces), operand bytes, function. */
static const struct {
    const char *name;
    int arity;
    void (*run)(cw_ctx *ctx, const uint8_t *a);
} ops[NOPS] = {
    [OP_CHILD] = {"child", 3, op_child},
    [OP_SPAWN] = {"spawn", 3, op_spawn},
    [OP_RETURN] = {"return", 2, op_return},
    [OP_PANIC] = {"panic", 1, op_panic},
    [OP_ABORT] = {"abort", 1, op_abort},
    [OP_JOIN] = {"join", 1, op_join},
    [OP_RELEASE] = {"release", 1, op_release},
    [OP_SLEEP] = {"sleep", 2, op_sleep},
    [OP_YIELD] = {"yield", 2, op_yield},
    [OP_WAIT] = {"wait", 1, op_wait},
    [OP_NOTIFY] = {"notify", 2, op_notify},
    [OP_PUSH] = {"push", 1, op_push},
    [OP_POP] = {"pop", 2, op_pop},
    [OP_BADPOP] = {"badpop", 1, op_badpop},
    [OP_TAKE] = {"take", 1, op_take},
    [OP_POLL] = {"poll", 1, op_poll},
    [OP_STOP] = {"stop", 2, op_stop},
    [OP_READY] = {"ready", 2, op_ready},
    [OP_RELCTX] = {"relctx", 1, op_relctx},
};

/* ---- Runs ------------------------------------------------------------------------------ */

struct input {
    const uint8_t *data;
    size_t size, pos;
};

static uint8_t take(struct input *in)
{
    return in->pos < in->size ? in->data[in->pos++] : 0;
}

static void *root(cw_ctx *ctx, void *arg)
{
    struct input *in = arg;
    W.root_ctx = ctx;
    W.answers = cw_chan_new(ctx, sizeof(struct answer), 0);
    if (!W.answers)
        fail("cw_chan_new returned NULL");
    for (W.op = 0; W.op < MAX_OPS && in->pos < in->size; W.op++) {
        int op = take(in) % NOPS;
        uint8_t a[3] = {0, 0, 0};
        for (int i = 0; i < ops[op].arity; i++)
            a[i] = take(in);
        note("%s %u %u %u", ops[op].name, a[0], a[1], a[2]);
        ops[op].run(ctx, a);
    }
    return ROOT_VALUE;
}

/* The handlers each task ran, in order, must be the model's. */
static void check_handlers(void)
{
    for (int t = 0; t < M.ntasks; t++) {
        int i = 0, j = 0;
        for (;;) {
            while (i < W.nran && W.ran[i].task != t)
                i++;
            while (j < M.nexpect && M.expect[j].task != t)
                j++;
            if (i == W.nran || j == M.nexpect)
                break;
            if (W.ran[i].id != M.expect[j].id)
                fail("task %d ran handler %d where handler %d was due [PAN-004]", t, W.ran[i].id,
                     M.expect[j].id);
            i++;
            j++;
        }
        if (i < W.nran)
            fail("task %d ran handler %d, which was not due [PAN-004]", t, W.ran[i].id);
        if (j < M.nexpect)
            fail("task %d never ran handler %d [PAN-004]", t, M.expect[j].id);
    }
}

static void run(const uint8_t *data, size_t size, cw_run_result *res)
{
    memset(&M, 0, sizeof M);
    memset(&W, 0, sizeof W);
    W.trace = getenv("SUPERVISION_TRACE") != NULL;
    model_node(-1, "");

    struct input in = {data, size, 0};
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.seed = take(&in);
    cfg.seed |= (uint64_t)take(&in) << 8;
    cfg.catch_panics = true;
    int rc = cw_start(fuzz_candidate(NULL), &cfg, root, &in, res);
    W.op = -1;
    if (rc != CW_OK)
        fail("run ended %s: %s", cw_strerror(rc), res->message);
    if (res->value != ROOT_VALUE)
        fail("run value %p, expected the root's %p [RUN-001]", res->value, ROOT_VALUE);

    /* The run's end unwinds every task still alive [RUN-003]. */
    for (int t = 0; t < M.ntasks; t++)
        if (!M.task[t].done)
            model_unwind(t);
    check_handlers();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cw_run_result first, second;
    run(data, size, &first);
    run(data, size, &second);
    /* Only a deterministic candidate owes the same run twice [DET-001]. */
    bool deterministic = fuzz_candidate(NULL)->capabilities & CW_CAP_DETERMINISTIC;
    if (deterministic &&
        (strcmp(first.digest, second.digest) != 0 || first.end_time != second.end_time ||
         first.iterations != second.iterations))
        fail("the same input ran differently: digest %s / %s [DET-001]", first.digest,
             second.digest);
    return 0;
}
