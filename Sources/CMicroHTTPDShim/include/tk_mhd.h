// MHD_start_daemon is variadic, which Swift cannot call: this shim passes the
// options TileKit needs as fixed arguments.
#ifndef TK_MHD_H
#define TK_MHD_H
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <microhttpd.h>

/// Starts a daemon bound to `ipv4_address` (dotted quad; NULL for every interface)
/// and `port` (0 lets the OS pick), with an internal thread pool of `threads`
/// threads using epoll, calling `handler` with `context`. URLs and query arguments reach
/// the handler still percent-encoded. Returns NULL on failure.
struct MHD_Daemon *tk_mhd_start(const char *ipv4_address, uint16_t port, unsigned int threads,
                                MHD_AccessHandlerCallback handler, void *context,
                                MHD_RequestCompletedCallback completed, void *completed_context);

/// The port the daemon listens on (useful after asking for port 0), or 0.
uint16_t tk_mhd_port(struct MHD_Daemon *daemon);
#endif
