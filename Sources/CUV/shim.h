#include <uv.h>
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/eventfd.h>

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <stdint.h>

/* An epoll instance a caller's event loop can poll (the C ABI's readable descriptor), and
 * descriptors in and out of it, readable-only (struct epoll_event is packed: built here). */
static inline int courier_poll_set_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
static inline int courier_poll_set_add(int set, int fd) {
    struct epoll_event event = {.events = EPOLLIN, .data = {.fd = fd}};
    return epoll_ctl(set, EPOLL_CTL_ADD, fd, &event);
}
static inline int courier_poll_set_remove(int set, int fd) { return epoll_ctl(set, EPOLL_CTL_DEL, fd, NULL); }

/* A monotonic timerfd that never blocks, and its one expiry `nanos` from now (at least 1 ns: 0
 * would disarm it). Setting it clears an expiry not yet read. */
static inline int courier_timer_create(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }
static inline int courier_timer_set(int fd, uint64_t nanos) {
    if (nanos == 0) nanos = 1;
    struct itimerspec when = {{0, 0}, {(time_t)(nanos / 1000000000u), (long)(nanos % 1000000000u)}};
    return timerfd_settime(fd, 0, &when, NULL);
}

/* Names the calling thread (shows in top, gdb, perf). A function because prctl is variadic. */
static inline void courier_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <net/if.h>
#include <netinet/in.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

/* A non-blocking NETLINK_ROUTE socket subscribed to link, address and route changes (IPv4 and
 * IPv6): readable whenever the kernel's view of the network changes. -1 (errno set) when the
 * system refuses one (no netlink in a sandbox). */
static inline int courier_netlink_route_socket(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl address = {0};
    address.nl_family = AF_NETLINK;
    address.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Asks the kernel which way it would send a packet to `destination` (what `ip route get` does:
 * every routing table and rule, the local table included), on a short-lived NETLINK_ROUTE socket
 * the kernel answers at once. 0 with the outgoing interface's name in `interface`; a positive
 * errno when there is no way there (ENETUNREACH, EHOSTUNREACH, EACCES for a prohibit route);
 * -1 when netlink is refused (a sandbox) and the question cannot be asked. */
static inline int courier_route_lookup(const struct sockaddr *destination, char *interface, size_t capacity) {
    const void *bytes;
    size_t length;
    unsigned char family = (unsigned char)destination->sa_family;
    if (family == AF_INET) {
        bytes = &((const struct sockaddr_in *)destination)->sin_addr;
        length = 4;
    } else if (family == AF_INET6) {
        bytes = &((const struct sockaddr_in6 *)destination)->sin6_addr;
        length = 16;
    } else {
        return EAFNOSUPPORT;
    }
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct timeval patience = { .tv_sec = 1, .tv_usec = 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    struct { struct nlmsghdr header; struct rtmsg route; char attributes[32]; } ask;
    memset(&ask, 0, sizeof ask);
    ask.header.nlmsg_type = RTM_GETROUTE;
    ask.header.nlmsg_flags = NLM_F_REQUEST;
    ask.header.nlmsg_seq = 1;
    ask.route.rtm_family = family;
    ask.route.rtm_dst_len = (unsigned char)(length * 8);
    struct rtattr *target = (struct rtattr *)ask.attributes;
    target->rta_type = RTA_DST;
    target->rta_len = (unsigned short)RTA_LENGTH(length);
    memcpy(RTA_DATA(target), bytes, length);
    ask.header.nlmsg_len = (unsigned)(NLMSG_LENGTH(sizeof ask.route) + RTA_ALIGN(target->rta_len));
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    if (sendto(fd, &ask, ask.header.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
        close(fd);
        return -1;
    }
    union { struct nlmsghdr header; char bytes[4096]; } answer;
    ssize_t received;
    do { received = recv(fd, &answer, sizeof answer, 0); } while (received < 0 && errno == EINTR);
    close(fd);
    if (received < (ssize_t)sizeof(struct nlmsghdr) || !NLMSG_OK(&answer.header, (unsigned)received)) return -1;
    if (answer.header.nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr *failure = NLMSG_DATA(&answer.header);
        return failure->error < 0 ? -failure->error : -1;
    }
    if (answer.header.nlmsg_type != RTM_NEWROUTE) return -1;
    const struct rtmsg *route = NLMSG_DATA(&answer.header);
    if (route->rtm_type == RTN_UNREACHABLE || route->rtm_type == RTN_BLACKHOLE) return EHOSTUNREACH;
    if (route->rtm_type == RTN_PROHIBIT) return EACCES;
    int attributes_length = (int)RTM_PAYLOAD(&answer.header);
    if (capacity > 0) interface[0] = 0;
    for (const struct rtattr *attribute = RTM_RTA(route); RTA_OK(attribute, attributes_length);
         attribute = RTA_NEXT(attribute, attributes_length)) {
        if (attribute->rta_type == RTA_OIF && RTA_PAYLOAD(attribute) >= sizeof(int) && capacity >= IF_NAMESIZE) {
            int index;
            memcpy(&index, RTA_DATA(attribute), sizeof index);
            if (if_indextoname((unsigned)index, interface) == NULL) interface[0] = 0;
        }
    }
    return 0;
}
