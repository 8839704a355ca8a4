// hiredis (Debian libhiredis-dev, 0.14), the synchronous client API. Imported only by the
// SharedCache module. The helpers below are prefixed tk_redis_ and exist only where Swift
// cannot do the job safely itself.
#ifndef TK_HIREDIS_SHIM_H
#define TK_HIREDIS_SHIM_H
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/time.h>
#include <hiredis/hiredis.h>

/// What a failed call left in errno, read before anything else can overwrite it: hiredis
/// reports a socket timeout (SO_RCVTIMEO/SO_SNDTIMEO expiring) only as REDIS_ERR_IO with
/// errno EAGAIN, and a connect timeout as ETIMEDOUT. Swift cannot promise that no runtime
/// call runs between a C call's return and its own read of errno.
static inline void *tk_redis_command_argv(redisContext *context, int argc, const char **argv,
                                          const size_t *lengths, int *saved_errno) {
    errno = 0;
    void *reply = redisCommandArgv(context, argc, argv, lengths);
    *saved_errno = errno;
    return reply;
}

/// Connects with `connect_timeout` (TCP handshake only: a host name is resolved by
/// getaddrinfo first, which no timeout bounds), then sets `io_timeout` on every read and
/// write and turns TCP keepalive on so a peer that vanished is noticed on idle connections.
/// Returns NULL only when hiredis could not allocate; otherwise the caller checks
/// `context->err` and frees the context on failure.
static inline redisContext *tk_redis_connect(const char *host, int port, struct timeval connect_timeout,
                                             struct timeval io_timeout, int *saved_errno) {
    errno = 0;
    redisContext *context = redisConnectWithTimeout(host, port, connect_timeout);
    *saved_errno = errno;
    if (context == NULL || context->err) return context;
    if (redisSetTimeout(context, io_timeout) != REDIS_OK || redisEnableKeepAlive(context) != REDIS_OK) {
        *saved_errno = errno;
        if (!context->err) {
            context->err = REDIS_ERR_IO;
        }
    }
    return context;
}

/// Blocks SIGPIPE on the calling thread. hiredis 0.14 writes with write(2), not
/// send(MSG_NOSIGNAL): writing to a connection Redis has reset would otherwise kill the
/// whole process. With the signal blocked the write fails with EPIPE instead; the signal
/// stays pending on this thread only, which never unblocks it. Call it on each thread that
/// owns connections.
static inline int tk_redis_block_sigpipe(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    return pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/// Names the calling worker thread so ps, top, gdb and /proc show what it is (Linux keeps 15
/// bytes). glibc declares pthread_setname_np only under _GNU_SOURCE, which Swift's Glibc
/// module is built without; the declaration below is glibc's own.
int pthread_setname_np(pthread_t thread, const char *name);
static inline int tk_redis_name_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
#endif
