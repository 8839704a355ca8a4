#include "tk_mhd.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

/* Leaves the URL and query as they came: TileKit parses and percent-decodes them itself,
   so an encoded dot or NUL is seen and refused instead of being decoded away. */
static size_t tk_keep_escaped(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls; (void)connection;
    return strlen(s);
}

struct MHD_Daemon *tk_mhd_start(const char *ipv4_address, uint16_t port, unsigned int threads,
                                MHD_AccessHandlerCallback handler, void *context,
                                MHD_RequestCompletedCallback completed, void *completed_context) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    if (ipv4_address && inet_pton(AF_INET, ipv4_address, &address.sin_addr) != 1) return NULL;
    /* ITC: MHD_quiesce_daemon (stop accepting, finish what is in flight) needs it. */
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
    if (threads == 0) threads = 1;
    return MHD_start_daemon(flags, port, NULL, NULL, handler, context,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
                            MHD_OPTION_UNESCAPE_CALLBACK, tk_keep_escaped, NULL,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
                            MHD_OPTION_END);
}

uint16_t tk_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}
