/* The serving bench's control: the least an HTTP/1.1 tile server can do, to tell what in a
   p99 belongs to the server and what to the machine.

   One thread, one epoll set. Every file under FOLDER is read into memory at start, and a
   GET of its path (after an optional PREFIX) is answered with its bytes, keep-alive, no
   other header than the type and the length; any other path gets a 404. No logging, no
   validation, no timeouts: it serves wrk on 127.0.0.1 for a bench and nothing else.

   With --busy-us N, each request also spins N microseconds of the thread's CPU time, so the
   control can be run at another server's CPU time a request.

   cc -O2 -o control-server control-server.c
   control-server FOLDER PORT [--prefix /maps/small] [--busy-us 14] */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

struct file { char *path; size_t path_length; char head[96]; size_t head_length; char *body; size_t length; };
static struct file *files;
static size_t capacity;  /* a power of two, at least twice the files */

struct connection {
    int fd;
    char request[8192];
    size_t received;
    struct iovec out[2];  /* what is left to send of the reply being sent */
};

static const char not_found[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
static long busy_ns;

static size_t slot(const char *path, size_t length) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < length; i++) h = (h ^ (unsigned char)path[i]) * 16777619u;
    size_t i = h & (capacity - 1);
    while (files[i].path && (files[i].path_length != length || memcmp(files[i].path, path, length))) i = (i + 1) & (capacity - 1);
    return i;
}

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "control-server: %s %s: %s\n", what, detail, strerror(errno));
    exit(1);
}

/* Every regular file under root/relative, keyed by "/relative/name". */
static size_t load(const char *root, const char *relative, int count_only) {
    char folder[4096];
    snprintf(folder, sizeof folder, "%s%s", root, relative);
    DIR *directory = opendir(folder);
    if (!directory) fail("cannot open", folder);
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(directory))) {
        if (entry->d_name[0] == '.') continue;
        char path[4096], name[8192];
        snprintf(path, sizeof path, "%s/%s", relative, entry->d_name);
        snprintf(name, sizeof name, "%s%s", root, path);
        struct stat status;
        if (stat(name, &status) != 0) fail("cannot stat", name);
        if (S_ISDIR(status.st_mode)) { count += load(root, path, count_only); continue; }
        if (!S_ISREG(status.st_mode)) continue;
        count++;
        if (count_only) continue;
        struct file *file = &files[slot(path, strlen(path))];
        file->path = strdup(path);
        file->path_length = strlen(path);
        file->length = (size_t)status.st_size;
        file->body = malloc(file->length ? file->length : 1);
        int fd = open(name, O_RDONLY);
        if (fd < 0 || !file->body || read(fd, file->body, file->length) != (ssize_t)file->length) fail("cannot read", name);
        close(fd);
        const char *type = strstr(path, ".png") ? "image/png" : strstr(path, ".jpg") ? "image/jpeg" : "application/octet-stream";
        file->head_length = (size_t)snprintf(file->head, sizeof file->head, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n",
                                             type, file->length);
    }
    closedir(directory);
    return count;
}

static void spin(void) {
    /* The thread's own CPU clock: time spent preempted does not count as work done. */
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < busy_ns);
}

static void drop(int epoll, struct connection *c) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c);
}

/* Sends what is left of the reply; false when the socket is full (wait for EPOLLOUT) or gone. */
static int flush(struct connection *c) {
    while (c->out[0].iov_len + c->out[1].iov_len) {
        ssize_t sent = writev(c->fd, c->out, 2);
        if (sent < 0) return 0;
        for (int i = 0; i < 2; i++) {
            size_t part = (size_t)sent < c->out[i].iov_len ? (size_t)sent : c->out[i].iov_len;
            c->out[i].iov_base = (char *)c->out[i].iov_base + part;
            c->out[i].iov_len -= part;
            sent -= (ssize_t)part;
        }
    }
    return 1;
}

/* Answers every whole request received, as long as each reply goes out at once. */
static void answer(int epoll, struct connection *c, const char *prefix, size_t prefix_length) {
    char *end;
    while (c->out[0].iov_len + c->out[1].iov_len == 0 && (end = memmem(c->request, c->received, "\r\n\r\n", 4))) {
        char *path = memchr(c->request, ' ', (size_t)(end - c->request));
        char *stop = path ? memchr(path + 1, ' ', (size_t)(end - path - 1)) : NULL;
        struct file *file = NULL;
        if (stop) {
            path++;
            size_t length = (size_t)(stop - path);
            if (length > prefix_length && !memcmp(path, prefix, prefix_length)) {
                file = &files[slot(path + prefix_length, length - prefix_length)];
                if (!file->path) file = NULL;
            }
        }
        if (busy_ns) spin();
        c->out[0] = (struct iovec){file ? file->head : (char *)not_found, file ? file->head_length : sizeof not_found - 1};
        c->out[1] = (struct iovec){file ? file->body : NULL, file ? file->length : 0};
        size_t used = (size_t)(end + 4 - c->request);
        memmove(c->request, end + 4, c->received - used);
        c->received -= used;
        if (!flush(c)) {
            if (errno != EAGAIN) { drop(epoll, c); return; }
            /* Writing only, until the reply is out: a request arriving meanwhile waits in the
               socket, and does not wake the loop while the reply cannot move. */
            struct epoll_event event = {.events = EPOLLOUT, .data.ptr = c};
            epoll_ctl(epoll, EPOLL_CTL_MOD, c->fd, &event);
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: control-server FOLDER PORT [--prefix P] [--busy-us N]\n"); return 2; }
    const char *prefix = "";
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--prefix")) prefix = argv[i + 1];
        else if (!strcmp(argv[i], "--busy-us")) busy_ns = (long)(atof(argv[i + 1]) * 1000);
    }
    size_t prefix_length = strlen(prefix);
    signal(SIGPIPE, SIG_IGN);  /* a client gone mid-reply is an EPIPE from writev, not the end */
    size_t count = load(argv[1], "", 1);
    for (capacity = 64; capacity < 2 * count; capacity *= 2) {}
    files = calloc(capacity, sizeof *files);
    if (!files) fail("out of memory for", argv[1]);
    load(argv[1], "", 0);

    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), on = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 511) != 0) fail("cannot listen on", argv[2]);
    int epoll = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
    struct epoll_event events[512];
    for (;;) {
        int ready = epoll_wait(epoll, events, 512, -1);
        for (int i = 0; i < ready; i++) {
            struct connection *c = events[i].data.ptr;
            if (!c) {
                int fd;
                while ((fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
                    c = calloc(1, sizeof *c);
                    if (!c) { close(fd); continue; }
                    c->fd = fd;
                    struct epoll_event added = {.events = EPOLLIN, .data.ptr = c};
                    epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &added);
                }
                continue;
            }
            if (c->out[0].iov_len + c->out[1].iov_len) {  /* a reply waiting for room */
                if (!flush(c)) { if (errno != EAGAIN) drop(epoll, c); continue; }
                struct epoll_event reading = {.events = EPOLLIN, .data.ptr = c};
                epoll_ctl(epoll, EPOLL_CTL_MOD, c->fd, &reading);
                answer(epoll, c, prefix, prefix_length);
                continue;
            }
            ssize_t got = recv(c->fd, c->request + c->received, sizeof c->request - c->received, 0);
            if (got == 0 || (got < 0 && errno != EAGAIN) || (got > 0 && c->received + (size_t)got == sizeof c->request && !memmem(c->request, sizeof c->request, "\r\n\r\n", 4))) {
                drop(epoll, c);
                continue;
            }
            if (got > 0) { c->received += (size_t)got; answer(epoll, c, prefix, prefix_length); }
        }
    }
}
