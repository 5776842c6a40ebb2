"""A shaped link between two network namespaces the run creates and removes, for the scenarios
(benchmarks/scenario/run.py) and their short test.

  near namespace  client programs; its end of the veth is named as the kind of network it plays
                  (wwan0: a modem, so the library's classifier says cellular; wlan0: wifi)
  far namespace   the servers, bound to its loopback, reached through the delay line
                  (delay_line.py) listening on FAR_ADDRESS

The link's rate is htb on both ends of the veth (the far end's egress is the download rate, the
near end's the upload rate: one bottleneck each way that every connection shares) in front of a
FIFO holding QUEUE_SECONDS of the rate (a cellular link's buffer is seconds deep; the default,
a thousand packets, is 36 s at 330 kbit/s, where TCP's retransmission timers back off past a
minute and a flow can starve for as long), loss is an
nftables rule dropping a share of packets entering either namespace, and the round trip is the
delay line's (this kernel has no netem). Addresses are TEST-NET-2 (198.51.100.0/24): nothing can
leave the machine. Everything is removed by `close()` (a `with` block), also when the run fails.
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NEAR_ADDRESS, FAR_ADDRESS = "198.51.100.1", "198.51.100.2"
QUEUE_SECONDS = 4

#: down and up in kbit/s, the round trip in ms, its jitter in ms, loss in percent, the near
#: interface's name (its kind of network).
PROFILES = {
    "edge": dict(down=240, up=200, rtt=400, jitter=0, loss=0, interface="wwan0"),
    "3g": dict(down=780, up=330, rtt=100, jitter=0, loss=1, interface="wwan0"),
    "wifi": dict(down=30000, up=30000, rtt=20, jitter=0, loss=0, interface="wlan0"),
    "flaky": dict(down=8000, up=4000, rtt=40, jitter=300, loss=5, interface="wlan0"),
}


def missing():
    """Why this machine cannot make the link (None when it can): root, iproute2, nft, and a
    kernel that allows a namespace with htb (probed by making one and removing it)."""
    if os.geteuid() != 0:
        return "the shaped link needs root (network namespaces)"
    for tool in ("ip", "tc", "nft"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (Debian: iproute2, nftables; `make scenario` installs them)"
    probe = f"courier-probe-{os.getpid()}"
    try:
        if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
            return "this kernel or container does not allow network namespaces"
        made = subprocess.run(["ip", "-n", probe, "link", "add", "p0", "type", "veth", "peer", "name", "p1"],
                              capture_output=True)
        shaped = subprocess.run(["ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "p0", "root", "handle", "1:",
                                 "htb"], capture_output=True)
        if made.returncode != 0 or shaped.returncode != 0:
            return "this kernel has no veth links or no htb qdisc"
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def run(*argv, check=True):
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")
    return done


class Link:
    """The two namespaces, the veth between them, the shaping and the delay line."""

    def __init__(self, profile, tag=None):
        self.profile = PROFILES[profile] if isinstance(profile, str) else profile
        tag = tag or str(os.getpid() % 100000)
        self.near, self.far = f"courier-near-{tag}", f"courier-far-{tag}"
        self.near_link, self.far_link = self.profile["interface"], f"far{tag}"
        self.processes, self.stops = [], []
        self.up = False

    def __enter__(self):
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_):
        self.close()

    def open(self):
        p = self.profile
        run("ip", "netns", "add", self.near)
        run("ip", "netns", "add", self.far)
        # (Made in the far namespace, so the near end's name cannot clash with the machine's.)
        run("ip", "-n", self.far, "link", "add", self.far_link, "type", "veth", "peer", "name", self.near_link,
            "netns", self.near)
        run("ip", "-n", self.near, "addr", "add", NEAR_ADDRESS + "/24", "dev", self.near_link)
        run("ip", "-n", self.far, "addr", "add", FAR_ADDRESS + "/24", "dev", self.far_link)
        for namespace, link in ((self.near, self.near_link), (self.far, self.far_link)):
            run("ip", "-n", namespace, "link", "set", "lo", "up")
            run("ip", "-n", namespace, "link", "set", link, "up")
        run("ip", "-n", self.near, "route", "add", "default", "via", FAR_ADDRESS)
        self.up = True
        # The rate: each end's egress through one htb class (a shared bottleneck each way).
        for namespace, link, rate in ((self.near, self.near_link, p["up"]), (self.far, self.far_link, p["down"])):
            self.exec_in(namespace, "tc", "qdisc", "add", "dev", link, "root", "handle", "1:", "htb", "default", "10")
            self.exec_in(namespace, "tc", "class", "add", "dev", link, "parent", "1:", "classid", "1:10", "htb",
                         "rate", f"{rate}kbit", "ceil", f"{rate}kbit")
            packets = max(30, min(1000, round(rate * 1000 / 8 * QUEUE_SECONDS / 1500)))
            self.exec_in(namespace, "tc", "qdisc", "add", "dev", link, "parent", "1:10", "handle", "10:", "pfifo",
                         "limit", str(packets))
        if p["loss"]:
            # The loss: a share of the packets entering either end (each direction loses its own).
            for namespace in (self.near, self.far):
                self.exec_in(namespace, "nft", "add", "table", "inet", "courier_loss")
                self.exec_in(namespace, "nft", "add", "chain", "inet", "courier_loss", "drop_some",
                             "{ type filter hook input priority 0; policy accept; }")
                self.exec_in(namespace, "nft", "add", "rule", "inet", "courier_loss", "drop_some", "iifname",
                             self.near_link if namespace == self.near else self.far_link,
                             "numgen", "random", "mod", "100", "<", str(p["loss"]), "drop")

    def serve(self, argv):
        """Starts a server (`argv`, printing its loopback port first) in the far namespace
        behind its own delay line (half the round trip each way); returns the URL clients use."""
        return self.delay_line(int(self.start_in(self.far, argv).split()[0]))

    def delay_line(self, target):
        """A delay line in the far namespace in front of its loopback port `target`; the URL."""
        line = self.start_in(self.far, [sys.executable, os.path.join(HERE, "delay_line.py"), FAR_ADDRESS, str(target),
                                        str(self.profile["rtt"] / 2), str(self.profile.get("jitter", 0))])
        return f"http://{FAR_ADDRESS}:{int(line.split()[0])}"

    def exec_in(self, namespace, *argv, check=True):
        return run("ip", "netns", "exec", namespace, *argv, check=check)

    def start_in(self, namespace, argv, env=None):
        """Starts `argv` in `namespace` (stopped by `close`); returns its first output line."""
        process = subprocess.Popen(["ip", "netns", "exec", namespace] + argv, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, stdin=subprocess.PIPE, text=True, env=env)
        self.processes.append(process)
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{argv[1] if len(argv) > 1 else argv[0]} did not start in {namespace}")
        return line

    def set_up(self, up):
        """The link down (`ip link set down`: the near end loses its carrier) or up again."""
        state = "up" if up else "down"
        run("ip", "-n", self.near, "link", "set", self.near_link, state)
        if up:
            run("ip", "-n", self.near, "route", "replace", "default", "via", FAR_ADDRESS)
        self.up = up

    def client(self, argv, env=None, **popen):
        """A client program in the near namespace."""
        return subprocess.Popen(["ip", "netns", "exec", self.near] + argv, env=env, **popen)

    def serve_nginx(self, directory):
        """nginx (benchmarks/nginx.sh, one worker) serving `directory`/html in the far namespace,
        behind its own delay line; returns the URL clients use."""
        script = os.path.join(os.path.dirname(HERE), "nginx.sh")
        env = dict(os.environ, NGINX_WORKERS="1")
        stop = ["ip", "netns", "exec", self.far, "sh", script, "stop", directory]
        self.stops.append(stop)
        port = self.start_in(self.far, ["sh", script, "start", directory], env=env).split()[0]
        return self.delay_line(int(port))

    def close(self):
        for stop in self.stops:
            subprocess.run(stop, capture_output=True, timeout=30)
        self.stops = []
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()
        self.processes = []
        for namespace in (self.near, self.far):
            run("ip", "netns", "del", namespace, check=False)


def leftover_namespaces():
    """Namespaces a run left behind (none when every `Link` was closed)."""
    listed = run("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith("courier-near-") or
            line.startswith("courier-far-")]


if __name__ == "__main__":
    reason = missing()
    print(reason or "the shaped link can be made here")
    if reason is None:
        with Link("3g") as link:
            print("made", link.near, link.far)
        print("left:", leftover_namespaces())
