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

struct MHD_Daemon *tk_mhd_start(const struct tk_mhd_settings *s,
                                MHD_AccessHandlerCallback handler, void *context,
                                MHD_RequestCompletedCallback completed,
                                MHD_NotifyConnectionCallback notify,
                                tk_mhd_target_callback target) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons(s->port);
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    if (s->ipv4_address && inet_pton(AF_INET, s->ipv4_address, &address.sin_addr) != 1) return NULL;
    /* Suspend/resume brings ITC, which MHD_quiesce_daemon (stop accepting, finish what is in
       flight) also needs. Epoll has no FD_SETSIZE cap, so the connection limit can follow
       the process's file-descriptor limit. A connection's memory pool is zeroed whole
       between keep-alive requests: 32 KB (MHD's default) takes request headers up to about
       15 KB (nginx takes 8 KB a line) and zeroes half what 64 KB did on every request. */
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
    unsigned int threads = s->threads ? s->threads : 1;
    return MHD_start_daemon(flags, s->port, NULL, NULL, handler, context,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, context,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, context,
                            MHD_OPTION_URI_LOG_CALLBACK, target, context,
                            MHD_OPTION_CONNECTION_LIMIT, s->connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->per_client_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, s->idle_timeout_seconds,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, s->listen_backlog,
                            MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
                            MHD_OPTION_UNESCAPE_CALLBACK, tk_keep_escaped, NULL,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
                            MHD_OPTION_END);
}

uint16_t tk_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

int tk_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

void *tk_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

size_t tk_mhd_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info ? info->header_size : 0;
}
