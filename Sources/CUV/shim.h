#include <uv.h>
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/eventfd.h>

/* Names the calling thread (shows in top, gdb, perf). A function because prctl is variadic. */
static inline void courier_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
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
