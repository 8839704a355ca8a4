/* accept4 */
#define _GNU_SOURCE
#include "tk_mhd.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Leaves the URL and query as they came: TileKit parses and percent-decodes them itself,
   so an encoded dot or NUL is seen and refused instead of being decoded away. */
static size_t tk_keep_escaped(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls; (void)connection;
    return strlen(s);
}

/* Why TileKit runs its own threads around libmicrohttpd instead of its thread pool:
   libmicrohttpd 0.9.75 (Debian 12) drains epoll with `while (128 == n) n = epoll_wait(...,
   128, timeout)`. When one call returns exactly 128 events and nothing else happens, the
   second call sleeps for the whole timeout (up to the 30 s idle timeout) before any of the
   128 ready connections is served. A thread holding 128 to a few hundred busy keep-alive
   connections hit it within seconds: `--threads 1` under 128-256 connections fell from
   70,000 requests/s to a few hundred, every connection timing out.

   So each thread drives a daemon of its own through libmicrohttpd's external epoll mode: it
   waits on the daemon's epoll descriptor (and a wake-up eventfd) itself, then calls
   MHD_run, whose own epoll_wait never blocks. Each daemon takes its share of the connection
   limits.

   TileKit binds the listening socket (so a port in use is still an error) and accepts on it
   itself, handing each connection to a thread through MHD_add_connection on that thread.
   When every daemon accepted from one shared socket, the thread awake won the race for each
   new connection, and a busy thread only got busier: wrk's 32 connections split 23/9, 31/1
   or 32/0 between two threads, so one core often served most of them (wrk got 52,000-73,000
   requests a second, and 70,000-83,000 split evenly).

   Which thread: connections that came in on the same CPU (SO_INCOMING_CPU: where the kernel
   took in their packets; on loopback, where the client's thread ran as it connected) go to
   the same thread (CPU number modulo threads; the threads are not pinned), unless it already
   holds 16 more than an even share; then the one with the fewest. A client's thread then
   talks to one of ours, and the kernel wakes it on the CPU of the thread that answers it.
   Shared out evenly, each of our threads woke both of wrk's, and wrk's two threads often
   queued on one core for the rest of a 4 ms scheduler tick while the other core ran ours:
   with wrk -t2 -c32, eight interleaved rounds of 5 s, the small tiles' p99 was 3.55 ms shared
   out evenly and 1.75 ms grouped by CPU (nginx's one worker 3.01), the large tiles' 6.83 and
   6.28 (nginx 5.63: the large tiles' misses, read from SQLite, keep them behind). The
   grouping holds when the client's threads connected from different CPUs: in 2 of 10 wrk
   runs all 32 came in on one CPU, one thread served them all, and the p99 was 3.4-4.2 ms.
   The 16 let one client thread's connections opened in a row (wrk opens a thread's all at
   once) stay together; connections that all come in on one CPU (a network card with one
   queue) are still spread, no thread more than 16 over an even share. */

/* A connection accepted by one thread for another to add to its daemon. */
struct tk_mhd_handoff {
    int fd;
    socklen_t length;
    struct sockaddr_storage address;
};

struct tk_mhd_server;

struct tk_mhd_worker {
    struct tk_mhd_server *server;
    struct MHD_Daemon *daemon;
    pthread_t thread;
    int epoll_fd;   /* the daemon's epoll descriptor, `wake` and the listening socket */
    int wake;       /* eventfd: written to wake the thread (a resume, a handoff, a quiesce, a stop) */
    atomic_bool stop;
    /* tk_mhd_quiesce asks; the thread takes the listening socket out of its set before its
       next run and counts itself in the server's `quiesced_threads`. */
    atomic_bool quiesce_asked;
    bool started;
    /* Connections open on this daemon, and those handed to it not yet added: what the
       accepting thread compares with `limit`, the daemon's share of the connection limit. */
    atomic_int load;
    int limit;
    pthread_mutex_t inbox_lock;
    struct tk_mhd_handoff *inbox;  /* under inbox_lock */
    size_t inbox_count, inbox_capacity;
};

/* Open connections per client address, for the whole server: libmicrohttpd's per-address
   limit counts per daemon, and which daemon accepts a connection is a race, so a client would
   be refused well before its limit. An open-addressing table of IPv4 addresses (count 0: an
   empty slot), at most half full. */
struct tk_mhd_clients {
    size_t capacity;  /* a power of two */
    size_t used;
    struct tk_mhd_client { uint32_t address; uint32_t count; } *slots;
};

struct tk_mhd_server {
    uint16_t port;
    int listen_fd;  /* closed by the last thread to stop listening (or by tk_mhd_stop) */
    unsigned int listening_threads;  /* set by tk_mhd_quiesce before it asks the threads */
    atomic_uint quiesced_threads;
    unsigned int count;
    atomic_bool quiesced;
    struct tk_mhd_clients clients;  /* under clients_lock */
    pthread_mutex_t clients_lock;
    uint32_t per_client_limit;
    MHD_NotifyConnectionCallback notify;  /* the caller's, called after counting */
    void *context;
    struct tk_mhd_worker workers[];
};

static size_t tk_mhd_home(const struct tk_mhd_clients *c, uint32_t address) {
    uint32_t h = address;
    h ^= h >> 16; h *= 0x45d9f3bu; h ^= h >> 16; h *= 0x45d9f3bu; h ^= h >> 16;
    return h & (c->capacity - 1);
}

/* The slot holding `address`, or the empty slot where it would go. */
static size_t tk_mhd_slot(const struct tk_mhd_clients *c, uint32_t address) {
    size_t i = tk_mhd_home(c, address);
    while (c->slots[i].count != 0 && c->slots[i].address != address) i = (i + 1) & (c->capacity - 1);
    return i;
}

static bool tk_mhd_clients_grow(struct tk_mhd_clients *c) {
    struct tk_mhd_clients grown = *c;
    grown.capacity = c->capacity ? c->capacity * 2 : 64;
    grown.slots = calloc(grown.capacity, sizeof *grown.slots);
    if (!grown.slots) return false;
    for (size_t i = 0; i < c->capacity; i++)
        if (c->slots[i].count) grown.slots[tk_mhd_slot(&grown, c->slots[i].address)] = c->slots[i];
    free(c->slots);
    c->slots = grown.slots;
    c->capacity = grown.capacity;
    return true;
}

static void tk_mhd_clients_add(struct tk_mhd_clients *c, uint32_t address) {
    if ((c->used + 1) * 2 > c->capacity && !tk_mhd_clients_grow(c)) return;  /* no memory: not counted */
    size_t i = tk_mhd_slot(c, address);
    if (c->slots[i].count == 0) {
        c->slots[i].address = address;
        c->used++;
    }
    c->slots[i].count++;
}

static void tk_mhd_clients_remove(struct tk_mhd_clients *c, uint32_t address) {
    if (!c->capacity) return;
    size_t mask = c->capacity - 1, i = tk_mhd_slot(c, address);
    if (c->slots[i].count == 0 || --c->slots[i].count > 0) return;
    /* The slot is empty now: move back the entries after it whose probe passed it. */
    for (size_t j = i;;) {
        c->slots[i].count = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (c->slots[j].count == 0) {
                c->used--;
                return;
            }
            size_t home = tk_mhd_home(c, c->slots[j].address);
            bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!stays) break;
        }
        c->slots[i] = c->slots[j];
        i = j;
    }
}

static bool tk_mhd_ipv4(const struct sockaddr *address, uint32_t *out) {
    if (!address || address->sa_family != AF_INET) return false;
    *out = ((const struct sockaddr_in *)(const void *)address)->sin_addr.s_addr;
    return true;
}

/* libmicrohttpd asks before it takes a connection. Checked here, counted when it starts: a
   connection refused later never started, so nothing is left counted. Daemons taking
   connections from one client at the same moment can pass the limit by one each. */
static enum MHD_Result tk_mhd_accept_policy(void *cls, const struct sockaddr *address, socklen_t length) {
    (void)length;
    struct tk_mhd_server *server = cls;
    uint32_t ipv4;
    if (!tk_mhd_ipv4(address, &ipv4)) return MHD_YES;
    pthread_mutex_lock(&server->clients_lock);
    bool room = server->clients.capacity == 0 ||
        server->clients.slots[tk_mhd_slot(&server->clients, ipv4)].count < server->per_client_limit;
    pthread_mutex_unlock(&server->clients_lock);
    return room ? MHD_YES : MHD_NO;
}

static void tk_mhd_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
    struct tk_mhd_worker *worker = cls;
    struct tk_mhd_server *server = worker->server;
    atomic_fetch_add(&worker->load, code == MHD_CONNECTION_NOTIFY_STARTED ? 1 : -1);
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    uint32_t ipv4;
    if (info && tk_mhd_ipv4(info->client_addr, &ipv4)) {
        pthread_mutex_lock(&server->clients_lock);
        if (code == MHD_CONNECTION_NOTIFY_STARTED) tk_mhd_clients_add(&server->clients, ipv4);
        else tk_mhd_clients_remove(&server->clients, ipv4);
        pthread_mutex_unlock(&server->clients_lock);
    }
    if (server->notify) server->notify(server->context, connection, socket_context, code);
}

/* Every running worker's daemon and wake-up eventfd. libmicrohttpd drops its inter-thread
   channel in external mode, so MHD_resume_connection from a task's thread wakes nothing: the
   connection waited for the worker's next event or its 1 s tick. tk_mhd_resume wakes the
   worker that owns the connection, found here by its daemon. */
static pthread_mutex_t tk_mhd_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tk_mhd_worker **tk_mhd_registry;
static size_t tk_mhd_registry_count, tk_mhd_registry_capacity;

/* `items` (of `size` bytes each, `count` used) with room for one more: the same array, or
   one of twice the capacity when it was full; NULL (nothing changed) when out of memory. */
static void *tk_mhd_room_for_one(void *items, size_t *capacity, size_t count, size_t size) {
    if (count < *capacity) return items;
    size_t grown = *capacity ? *capacity * 2 : 16;
    void *moved = realloc(items, grown * size);
    if (moved) *capacity = grown;
    return moved;
}

static bool tk_mhd_register(struct tk_mhd_worker *worker) {
    pthread_mutex_lock(&tk_mhd_registry_lock);
    struct tk_mhd_worker **room = tk_mhd_room_for_one(tk_mhd_registry, &tk_mhd_registry_capacity, tk_mhd_registry_count, sizeof *room);
    bool ok = room != NULL;
    if (ok) {
        tk_mhd_registry = room;
        tk_mhd_registry[tk_mhd_registry_count++] = worker;
    }
    pthread_mutex_unlock(&tk_mhd_registry_lock);
    return ok;
}

static void tk_mhd_unregister(struct tk_mhd_worker *worker) {
    pthread_mutex_lock(&tk_mhd_registry_lock);
    for (size_t i = 0; i < tk_mhd_registry_count; i++) {
        if (tk_mhd_registry[i] == worker) {
            tk_mhd_registry[i] = tk_mhd_registry[--tk_mhd_registry_count];
            break;
        }
    }
    pthread_mutex_unlock(&tk_mhd_registry_lock);
}

static void tk_mhd_wake(int fd) {
    uint64_t one = 1;
    (void)!write(fd, &one, sizeof one);
}

void tk_mhd_resume(struct MHD_Connection *connection) {
    /* The daemon is read first: the info points into the connection, which its thread may
       finish and free as soon as it is resumed. */
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_DAEMON);
    struct MHD_Daemon *daemon = info ? info->daemon : NULL;
    MHD_resume_connection(connection);
    if (!daemon) return;
    pthread_mutex_lock(&tk_mhd_registry_lock);
    for (size_t i = 0; i < tk_mhd_registry_count; i++) {
        if (tk_mhd_registry[i]->daemon == daemon) {
            tk_mhd_wake(tk_mhd_registry[i]->wake);
            break;
        }
    }
    pthread_mutex_unlock(&tk_mhd_registry_lock);
}

static long long tk_mhd_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* The listening socket in a thread's epoll set: EPOLLEXCLUSIVE, so a new connection wakes
   one waiting thread, not all. */
static bool tk_mhd_listen_on(struct tk_mhd_worker *worker) {
    struct epoll_event event = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.u32 = 2};
    return epoll_ctl(worker->epoll_fd, EPOLL_CTL_ADD, worker->server->listen_fd, &event) == 0;
}

/* The worker with the most room under its share of the connection limit, `self` among
   equals (no handoff needed); `room` is what it has left, `total` the connections all
   workers hold. */
static struct tk_mhd_worker *tk_mhd_roomiest(struct tk_mhd_server *server, struct tk_mhd_worker *self, int *room, long *total) {
    struct tk_mhd_worker *best = self;
    int most = self->limit - atomic_load(&self->load);
    *total = 0;
    for (unsigned int i = 0; i < server->count; i++) {
        int load = atomic_load(&server->workers[i].load);
        *total += load;
        int left = server->workers[i].limit - load;
        if (left > most) {
            most = left;
            best = &server->workers[i];
        }
    }
    *room = most;
    return best;
}

/* Queues a connection for `target`'s thread and wakes it; false if out of memory. */
static bool tk_mhd_hand_over(struct tk_mhd_worker *target, const struct tk_mhd_handoff *handoff) {
    pthread_mutex_lock(&target->inbox_lock);
    struct tk_mhd_handoff *room = tk_mhd_room_for_one(target->inbox, &target->inbox_capacity, target->inbox_count, sizeof *room);
    bool ok = room != NULL;
    if (ok) {
        target->inbox = room;
        target->inbox[target->inbox_count++] = *handoff;
    }
    pthread_mutex_unlock(&target->inbox_lock);
    if (ok) tk_mhd_wake(target->wake);
    return ok;
}

/* Adds a connection to this thread's daemon, which closes it if refused (a limit, the
   accept policy), and takes it off the count of those on their way. */
static void tk_mhd_add(struct tk_mhd_worker *worker, const struct tk_mhd_handoff *handoff) {
    MHD_add_connection(worker->daemon, handoff->fd, (const struct sockaddr *)&handoff->address, handoff->length);
    atomic_fetch_sub(&worker->load, 1);
}

/* Adds the connections other threads accepted for this one. */
static void tk_mhd_take_handoffs(struct tk_mhd_worker *worker) {
    for (;;) {
        struct tk_mhd_handoff handoff;
        pthread_mutex_lock(&worker->inbox_lock);
        bool any = worker->inbox_count > 0;
        if (any) handoff = worker->inbox[--worker->inbox_count];
        pthread_mutex_unlock(&worker->inbox_lock);
        if (!any) return;
        tk_mhd_add(worker, &handoff);
    }
}

/* Connections one thread may hold over an even share to keep connections that came in on
   its CPU together (see the top of this file). */
enum { TK_MHD_CPU_ALLOWANCE = 16 };

/* The thread for a connection just accepted: the one for the CPU it came in on while that
   thread has room and stays within TK_MHD_CPU_ALLOWANCE of an even share, else `fewest`.
   `held`: the connections all threads held before this one (tk_mhd_roomiest's total). */
static struct tk_mhd_worker *tk_mhd_for_incoming_cpu(struct tk_mhd_server *server, int fd, struct tk_mhd_worker *fewest, long held) {
    int cpu = -1;
    socklen_t length = sizeof cpu;
    if (server->count < 2 || getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &length) != 0 || cpu < 0) return fewest;
    struct tk_mhd_worker *home = &server->workers[(unsigned int)cpu % server->count];
    long even = (held + 1 + server->count - 1) / server->count;  /* with this connection */
    int load = atomic_load(&home->load);
    return load < home->limit && load + 1 <= even + TK_MHD_CPU_ALLOWANCE ? home : fewest;
}

/* Accepts what is waiting (a bounded batch, so this thread's own connections are not kept
   waiting by a flood) and gives each connection to the thread for the CPU it came in on or
   to the one with the most room (tk_mhd_for_incoming_cpu). Returns 0, or for how many
   milliseconds the caller should stop listening rather than spin on a socket that stays
   readable: every thread full (new connections wait in the backlog, as
   libmicrohttpd's own accept left them, instead of being accepted and closed), or the
   process out of descriptors or memory. */
static int tk_mhd_accept(struct tk_mhd_worker *worker) {
    struct tk_mhd_server *server = worker->server;
    for (int i = 0; i < 64; i++) {
        int room;
        long held;
        struct tk_mhd_worker *target = tk_mhd_roomiest(server, worker, &room, &held);
        if (room <= 0) return 10;
        struct tk_mhd_handoff handoff;
        handoff.length = sizeof handoff.address;
        handoff.fd = accept4(server->listen_fd, (struct sockaddr *)&handoff.address, &handoff.length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (handoff.fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) ? 100 : 0;
        }
        target = tk_mhd_for_incoming_cpu(server, handoff.fd, target, held);
        atomic_fetch_add(&target->load, 1);
        if (target != worker) {
            if (tk_mhd_hand_over(target, &handoff)) continue;
            atomic_fetch_sub(&target->load, 1);
            atomic_fetch_add(&worker->load, 1);
        }
        tk_mhd_add(worker, &handoff);
    }
    return 0;
}

static void *tk_mhd_drive(void *argument) {
    struct tk_mhd_worker *worker = argument;
    bool listening = true;      /* tk_mhd_start adds the socket to every thread's set */
    bool quiesced = false;
    long long paused_until = 0; /* full, or out of descriptors: listening again at this time */
    while (!atomic_load(&worker->stop)) {
        MHD_UNSIGNED_LONG_LONG next = 0;
        int wait_ms = 1000;  /* at least once a second, for timeouts MHD may not report */
        if (MHD_get_timeout(worker->daemon, &next) == MHD_YES && next < 1000) wait_ms = (int)next;
        if (paused_until) {
            long long left = paused_until - tk_mhd_now_ms();
            if (left < wait_ms) wait_ms = left > 0 ? (int)left : 0;
        }
        struct epoll_event events[3];
        int ready = epoll_wait(worker->epoll_fd, events, 3, wait_ms);
        if (atomic_load(&worker->stop)) break;
        if (ready < 0) {  /* EINTR; anything else cannot happen with these descriptors */
            if (errno != EINTR) usleep(1000);
            continue;
        }
        bool incoming = false;
        for (int i = 0; i < ready; i++) {
            if (events[i].data.u32 == 1) {  /* a wake-up: reset the eventfd */
                uint64_t count;
                (void)!read(worker->wake, &count, sizeof count);
            } else if (events[i].data.u32 == 2) {
                incoming = true;
            }
        }
        if (atomic_load(&worker->quiesce_asked) && !quiesced) {
            /* The daemon has no listening socket of its own: this is all quiescing takes. */
            if (listening) epoll_ctl(worker->epoll_fd, EPOLL_CTL_DEL, worker->server->listen_fd, NULL);
            listening = false;
            paused_until = 0;
            /* The last thread to let go of the socket closes it: closed earlier, its number
               could be reused by a file that a thread then accepted on. */
            struct tk_mhd_server *server = worker->server;
            if (atomic_fetch_add(&server->quiesced_threads, 1) + 1 == server->listening_threads) {
                close(server->listen_fd);
                server->listen_fd = -1;
            }
            quiesced = true;
        } else if (!atomic_load(&worker->quiesce_asked)) {
            if (paused_until && tk_mhd_now_ms() >= paused_until && tk_mhd_listen_on(worker)) {
                listening = true;
                paused_until = 0;
            }
            int pause_ms = incoming && listening ? tk_mhd_accept(worker) : 0;
            if (pause_ms) {
                epoll_ctl(worker->epoll_fd, EPOLL_CTL_DEL, worker->server->listen_fd, NULL);
                listening = false;
                paused_until = tk_mhd_now_ms() + pause_ms;
            }
        }
        tk_mhd_take_handoffs(worker);
        MHD_run(worker->daemon);
    }
    return NULL;
}

static int tk_mhd_listen(const struct tk_mhd_settings *s, uint16_t *port) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons(s->port);
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    if (s->ipv4_address && inet_pton(AF_INET, s->ipv4_address, &address.sin_addr) != 1) return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int on = 1;
    socklen_t length = sizeof address;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        bind(fd, (struct sockaddr *)&address, sizeof address) != 0 ||
        listen(fd, (int)s->listen_backlog) != 0 ||
        getsockname(fd, (struct sockaddr *)&address, &length) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(address.sin_port);
    return fd;
}

/* A share of `total` for daemon `index` of `count` (count <= total): the remainder goes to
   the first daemons, so the shares add up to the total. */
static unsigned int tk_mhd_share(unsigned int total, unsigned int index, unsigned int count) {
    unsigned int share = total / count + (index < total % count ? 1u : 0u);
    return share ? share : 1u;
}

static struct MHD_Daemon *tk_mhd_daemon(const struct tk_mhd_settings *s, struct tk_mhd_server *server,
                                        struct tk_mhd_worker *worker,
                                        MHD_AccessHandlerCallback handler, void *context,
                                        MHD_RequestCompletedCallback completed,
                                        tk_mhd_target_callback target) {
    /* Suspend/resume needs MHD_ALLOW_SUSPEND_RESUME (MHD drops its inter-thread channel in
       external mode: tk_mhd_resume wakes the thread). Epoll has no FD_SETSIZE cap, so the
       connection limit can follow the process's file-descriptor limit. A connection's memory
       pool is zeroed whole between keep-alive requests: 32 KB (MHD's default) takes request
       headers up to about 15 KB (nginx takes 8 KB a line) and zeroes half what 64 KB did on
       every request.
       Each daemon takes its share of the connection limit (`worker->limit`); the
       limit per client address is the server's (`tk_mhd_accept_policy`). */
    return MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_NO_LISTEN_SOCKET, 0,
                            tk_mhd_accept_policy, server, handler, context,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, context,
                            MHD_OPTION_NOTIFY_CONNECTION, tk_mhd_notify, worker,
                            MHD_OPTION_URI_LOG_CALLBACK, target, context,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned int)worker->limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, s->idle_timeout_seconds,
                            MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
                            MHD_OPTION_UNESCAPE_CALLBACK, tk_keep_escaped, NULL,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
                            MHD_OPTION_END);
}

struct tk_mhd_server *tk_mhd_start(const struct tk_mhd_settings *s,
                                   MHD_AccessHandlerCallback handler, void *context,
                                   MHD_RequestCompletedCallback completed,
                                   MHD_NotifyConnectionCallback notify,
                                   tk_mhd_target_callback target) {
    unsigned int count = s->threads ? s->threads : 1;
    if (s->connection_limit && count > s->connection_limit) count = s->connection_limit;
    struct tk_mhd_server *server = calloc(1, sizeof *server + count * sizeof(struct tk_mhd_worker));
    if (!server) return NULL;
    server->count = count;
    server->notify = notify;
    server->context = context;
    server->per_client_limit = s->per_client_limit ? s->per_client_limit : UINT32_MAX;
    pthread_mutex_init(&server->clients_lock, NULL);
    for (unsigned int i = 0; i < count; i++) {
        server->workers[i].server = server;
        server->workers[i].epoll_fd = server->workers[i].wake = -1;
        pthread_mutex_init(&server->workers[i].inbox_lock, NULL);
    }
    server->listen_fd = tk_mhd_listen(s, &server->port);
    if (server->listen_fd < 0) {
        tk_mhd_stop(server);
        return NULL;
    }
    bool failed = false;
    for (unsigned int i = 0; i < count && !failed; i++) {
        struct tk_mhd_worker *worker = &server->workers[i];
        worker->limit = (int)tk_mhd_share(s->connection_limit, i, count);
        worker->daemon = tk_mhd_daemon(s, server, worker, handler, context, completed, target);
        const union MHD_DaemonInfo *info = worker->daemon ? MHD_get_daemon_info(worker->daemon, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
        worker->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        worker->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        struct epoll_event daemon_event = {.events = EPOLLIN, .data.u32 = 0};
        struct epoll_event wake_event = {.events = EPOLLIN, .data.u32 = 1};
        failed = !info || worker->epoll_fd < 0 || worker->wake < 0 ||
            epoll_ctl(worker->epoll_fd, EPOLL_CTL_ADD, info->epoll_fd, &daemon_event) != 0 ||
            epoll_ctl(worker->epoll_fd, EPOLL_CTL_ADD, worker->wake, &wake_event) != 0 ||
            !tk_mhd_register(worker) ||
            pthread_create(&worker->thread, NULL, tk_mhd_drive, worker) != 0;
        if (!failed) worker->started = true;
    }
    /* Listening only once every thread runs: any of them may be handed a connection. */
    for (unsigned int i = 0; i < count && !failed; i++) failed = !tk_mhd_listen_on(&server->workers[i]);
    if (failed) {
        tk_mhd_stop(server);
        return NULL;
    }
    return server;
}

void tk_mhd_quiesce(struct tk_mhd_server *server) {
    if (atomic_exchange(&server->quiesced, true)) return;
    for (unsigned int i = 0; i < server->count; i++) server->listening_threads += server->workers[i].started ? 1u : 0u;
    for (unsigned int i = 0; i < server->count; i++) {
        struct tk_mhd_worker *worker = &server->workers[i];
        if (worker->started) {
            atomic_store(&worker->quiesce_asked, true);
            tk_mhd_wake(worker->wake);
        }
    }
    /* Each thread stops listening before its next run (at most one run away), and the last
       one closes the socket; the wait is bounded all the same (a thread held up in a run
       closes it when it gets there). */
    for (int waited = 0; waited < 5000 && atomic_load(&server->quiesced_threads) < server->listening_threads; waited++)
        usleep(1000);
}

void tk_mhd_stop(struct tk_mhd_server *server) {
    tk_mhd_quiesce(server);
    /* Every thread ends before any worker's descriptors close: a thread still running (one
       that never let go of the socket) could hand a connection over, and wake, a worker
       already stopped. */
    for (unsigned int i = 0; i < server->count; i++) {
        if (server->workers[i].started) {
            atomic_store(&server->workers[i].stop, true);
            tk_mhd_wake(server->workers[i].wake);
        }
    }
    for (unsigned int i = 0; i < server->count; i++)
        if (server->workers[i].started) pthread_join(server->workers[i].thread, NULL);
    for (unsigned int i = 0; i < server->count; i++) {
        struct tk_mhd_worker *worker = &server->workers[i];
        tk_mhd_unregister(worker);
        if (worker->daemon) MHD_stop_daemon(worker->daemon);
        if (worker->epoll_fd >= 0) close(worker->epoll_fd);
        if (worker->wake >= 0) close(worker->wake);
    }
    /* Every thread has ended: what was handed over and never added, and the socket if a
       thread never let go of it, are closed here. */
    for (unsigned int i = 0; i < server->count; i++) {
        struct tk_mhd_worker *worker = &server->workers[i];
        for (size_t k = 0; k < worker->inbox_count; k++) close(worker->inbox[k].fd);
        free(worker->inbox);
        pthread_mutex_destroy(&worker->inbox_lock);
    }
    if (server->listen_fd >= 0) close(server->listen_fd);
    free(server->clients.slots);
    pthread_mutex_destroy(&server->clients_lock);
    free(server);
}

unsigned int tk_mhd_thread_connections(struct tk_mhd_server *server, int *counts, unsigned int capacity) {
    for (unsigned int i = 0; i < server->count && i < capacity; i++) counts[i] = atomic_load(&server->workers[i].load);
    return server->count;
}

uint16_t tk_mhd_port(struct tk_mhd_server *server) {
    return server->port;
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
