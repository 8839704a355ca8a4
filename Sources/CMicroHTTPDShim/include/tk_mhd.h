// MHD_start_daemon and MHD_get_connection_info are variadic, which Swift cannot call:
// this shim passes the options TileKit needs as fixed arguments.
#ifndef TK_MHD_H
#define TK_MHD_H
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <microhttpd.h>

/// What the daemon is started with (see HTTPServer.Limits for the meaning of each).
struct tk_mhd_settings {
    const char *ipv4_address;    /* dotted quad; NULL for every interface */
    uint16_t port;               /* 0 lets the OS pick */
    unsigned int threads;        /* epoll threads, each a daemon with its own share of connections */
    unsigned int connection_limit;
    unsigned int per_client_limit;
    unsigned int idle_timeout_seconds;
    unsigned int listen_backlog;
};

/// Called with each request's target as it came (path and query) before the handler; what it
/// returns is the request's first state pointer (libmicrohttpd's URI log callback).
typedef void *(*tk_mhd_target_callback)(void *context, const char *target, struct MHD_Connection *connection);

/// `threads` libmicrohttpd daemons, each driven by a thread of its own (see tk_mhd.c for
/// why not libmicrohttpd's pool), behind one listening socket whose connections go to one
/// thread per CPU they came in on, within 16 of an even share (else to the thread with the
/// fewest open): suspend/resume allowed, strict request parsing, calling `handler` with
/// `context`, `target` with each request's raw target and `notify` on every connection's
/// start and close. URLs and query arguments reach
/// the handler still percent-encoded. NULL on failure (the port in use, among others).
struct tk_mhd_server;
struct tk_mhd_server *tk_mhd_start(const struct tk_mhd_settings *settings,
                                   MHD_AccessHandlerCallback handler, void *context,
                                   MHD_RequestCompletedCallback completed,
                                   MHD_NotifyConnectionCallback notify,
                                   tk_mhd_target_callback target);

/// Stops accepting and closes the listening socket; connections open go on. Idempotent.
void tk_mhd_quiesce(struct tk_mhd_server *server);

/// Stops every thread and daemon (after tk_mhd_quiesce if it was not called) and frees the
/// server. No connection may be suspended.
void tk_mhd_stop(struct tk_mhd_server *server);

/// poll()'s "peer closed its end" bit, which glibc shows only under _GNU_SOURCE.
#define TK_POLLRDHUP 0x2000

/// MHD_resume_connection, and a wake-up for the thread that drives the connection's daemon
/// (libmicrohttpd signals none in external mode). Call it instead of MHD_resume_connection.
void tk_mhd_resume(struct MHD_Connection *connection);

/// Connections open on each thread (and handed to it, not yet added), into `counts` (at most
/// `capacity`); returns the number of threads.
unsigned int tk_mhd_thread_connections(struct tk_mhd_server *server, int *counts, unsigned int capacity);

/// The port the server listens on (useful after asking for port 0).
uint16_t tk_mhd_port(struct tk_mhd_server *server);

/// The connection's socket, or -1.
int tk_mhd_connection_fd(struct MHD_Connection *connection);

/// The pointer the connection-notify callback stored for this connection, or NULL.
void *tk_mhd_socket_context(struct MHD_Connection *connection);

/// Bytes of the request line and headers as received (0 when unknown): compared with what
/// the parsed strings add up to, it shows bytes (a NUL) that C strings hid.
size_t tk_mhd_header_size(struct MHD_Connection *connection);
#endif
