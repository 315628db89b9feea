/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * reactor.c - waiting on the kernel for the runtime: epoll, with a timerfd
 * for the earliest sleeping task and an eventfd to interrupt a wait.
 *
 * The reactor has no thread of its own. A shared worker with nothing to
 * run takes it (native.h: `held`) and blocks in epoll_wait; the tasks its
 * events wake are queued on that same worker, which runs them once the
 * batch is done. So a socket that becomes readable resumes its task on the
 * thread that saw the event, with no hand-off to another thread, which is
 * what a reactor thread of its own would cost on every message. Busy
 * workers look at the reactor without blocking every CW_POLL_EVERY tasks,
 * so sockets and timers are served even when no worker is idle.
 *
 * Sleeps are kept in the core's alarm heap, keyed by their deadline on the
 * runtime clock. The timerfd runs on CLOCK_MONOTONIC, to which the runtime
 * clock is tied (see native.h), so a sleep is never cut short or stretched
 * by a change of the wall clock.
 *
 * A socket's source may be forgotten while the worker holding the reactor
 * is working through a batch of events that names it. So forgotten sources
 * are freed by the holder, before its next epoll_wait: by then no event
 * can name them.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "native/native.h"
#include "native/os.h"

static cw_native *owner(cw_reactor *r)
{
    return cw_container_of(r, cw_native, reactor);
}

/* Point the timerfd at `deadline`; CW_TIME_MAX disarms it. */
static void set_timer(cw_reactor *r, cw_time deadline)
{
    cw_native *n = owner(r);
    struct itimerspec its = {{0, 0}, {0, 0}};
    r->armed = deadline;
    if (deadline != CW_TIME_MAX) {
        uint64_t mono =
            deadline <= n->start_real ? n->start_mono : n->start_mono + (deadline - n->start_real);
        if (mono < n->start_mono) /* wrapped: so far ahead it cannot fire */
            mono = UINT64_MAX;
        if (mono == 0)
            mono = 1; /* an all-zero it_value would disarm */
        its.it_value.tv_sec = (time_t)(mono / 1000000000u);
        its.it_value.tv_nsec = (long)(mono % 1000000000u);
    }
    if (timerfd_settime(r->timerfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
        cw_fatal("timerfd_settime failed: errno %d", errno);
}

/* The timerfd expired: reading it rearms its readiness; the sleepers that
 * are due are woken once the batch is done. The read's result does not
 * matter: whether it gave the count, was interrupted (EINTR) or found it
 * already taken (EAGAIN), fire_due() wakes what is due by the clock and
 * sets the timer again, which clears or renews its readiness. */
static void timer_expired(cw_reactor_source *src, uint32_t events)
{
    (void)events;
    uint64_t ticks;
    ssize_t got = cw_os.read(src->fd, &ticks, sizeof ticks);
    (void)got;
    cw_container_of(src, cw_reactor, timer_src)->expired = true;
}

/* The eventfd only ends a wait. It is watched edge-triggered, where every
 * write is an event of its own, so its count is never read back: one
 * system call per interruption, the write. */
static void interrupted(cw_reactor_source *src, uint32_t events)
{
    (void)src;
    (void)events;
}

static void free_forgotten(cw_reactor *r)
{
    pthread_mutex_lock(&r->lock);
    cw_reactor_source *src = r->forgotten;
    r->forgotten = NULL;
    pthread_mutex_unlock(&r->lock);
    while (src) {
        cw_reactor_source *next = src->next;
        src->release(src);
        src = next;
    }
}

/* After the timerfd expired: wake what is due and set it for what is next
 * (an expired timerfd is disarmed, whatever `armed` still says). */
static void fire_due(cw_reactor *r)
{
    cw_native *n = owner(r);
    pthread_mutex_lock(&r->lock);
    cw_time now = cw_native_now(n);
    cw_wait *w;
    while ((w = cw_alarms_peek(&r->alarms)) && cw_waitv_of(w)->deadline <= now) {
        cw_alarms_pop(&r->alarms);
        cw_native_sched.wake(cw_wait_task(w));
    }
    set_timer(r, w ? cw_waitv_of(w)->deadline : CW_TIME_MAX);
    pthread_mutex_unlock(&r->lock);
}

void cw_reactor_poll(cw_reactor *r, bool block)
{
    struct epoll_event events[64];
    free_forgotten(r);
    int k = cw_os.epoll_wait(r->epfd, events, 64, block ? -1 : 0);
    if (k < 0 && errno != EINTR)
        cw_fatal("epoll_wait failed: errno %d", errno);
    if (k > 0) {
        /* One hold of the runtime's lock for the whole batch: a socket's
         * `ready` wakes its waiters under it. */
        cw_rt_lock(&owner(r)->rt);
        for (int i = 0; i < k; i++) {
            cw_reactor_source *src = events[i].data.ptr;
            src->ready(src, events[i].events);
        }
        cw_rt_unlock(&owner(r)->rt);
    }
    /* The timerfd is always set for the earliest alarm (or earlier), so no
     * alarm is due before it expired. */
    if (r->expired) {
        r->expired = false;
        fire_due(r);
    }
}

/* EAGAIN means the count is at its maximum, so a wake is pending anyway;
 * a signal handler's interruption is tried again. Anything else is a
 * descriptor of ours gone bad (00-conventions.md). */
void cw_reactor_notify(cw_reactor *r)
{
    uint64_t one = 1;
    while (cw_os.write(r->eventfd, &one, sizeof one) != sizeof one) {
        if (errno == EAGAIN)
            return;
        if (errno != EINTR)
            cw_fatal("cannot wake the reactor: errno %d", errno);
    }
}

static int watch(cw_reactor *r, cw_reactor_source *src, int fd,
                 void (*ready)(cw_reactor_source *, uint32_t), uint32_t events)
{
    src->ready = ready;
    src->fd = fd;
    struct epoll_event ev = {.events = events, .data.ptr = src};
    return epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev);
}

int cw_reactor_watch(cw_reactor *r, cw_reactor_source *src)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = src};
    return epoll_ctl(r->epfd, EPOLL_CTL_ADD, src->fd, &ev) == 0 ? CW_OK : CW_ERR_IO;
}

int cw_reactor_watch_output(cw_reactor *r, cw_reactor_source *src)
{
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLET, .data.ptr = src};
    return epoll_ctl(r->epfd, EPOLL_CTL_MOD, src->fd, &ev) == 0 ? CW_OK : CW_ERR_IO;
}

void cw_reactor_forget(cw_reactor *r, cw_reactor_source *src)
{
    epoll_ctl(r->epfd, EPOLL_CTL_DEL, src->fd, NULL);
    pthread_mutex_lock(&r->lock);
    src->next = r->forgotten;
    r->forgotten = src;
    pthread_mutex_unlock(&r->lock);
}

int cw_reactor_start(cw_reactor *r)
{
    pthread_mutex_init(&r->lock, NULL);
    r->armed = CW_TIME_MAX;
    r->expired = false;
    r->forgotten = NULL;
    r->epfd = epoll_create1(EPOLL_CLOEXEC);
    r->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    r->eventfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (r->epfd < 0 || r->timerfd < 0 || r->eventfd < 0 ||
        watch(r, &r->timer_src, r->timerfd, timer_expired, EPOLLIN) != 0 ||
        watch(r, &r->event_src, r->eventfd, interrupted, EPOLLIN | EPOLLET) != 0) {
        if (r->epfd >= 0)
            close(r->epfd);
        if (r->timerfd >= 0)
            close(r->timerfd);
        if (r->eventfd >= 0)
            close(r->eventfd);
        pthread_mutex_destroy(&r->lock);
        return CW_ERR_IO;
    }
    return CW_OK;
}

void cw_reactor_stop(cw_reactor *r)
{
    free_forgotten(r);
    close(r->epfd);
    close(r->timerfd);
    close(r->eventfd);
    cw_alarms_free(&r->alarms);
    pthread_mutex_destroy(&r->lock);
}

bool cw_reactor_arm(cw_reactor *r, cw_wait *w, cw_task *t)
{
    pthread_mutex_lock(&r->lock);
    bool armed = cw_alarms_push(&r->alarms, w, t);
    if (armed && cw_waitv_of(w)->deadline < r->armed)
        set_timer(r, cw_waitv_of(w)->deadline);
    pthread_mutex_unlock(&r->lock);
    return armed;
}

void cw_reactor_disarm(cw_reactor *r, cw_wait *w)
{
    /* The timerfd may still be set for this deadline: firing for nothing
     * costs one wake of the reactor, cheaper than resetting it each time. */
    pthread_mutex_lock(&r->lock);
    cw_alarms_remove(&r->alarms, w);
    pthread_mutex_unlock(&r->lock);
}
