"""The outbox and the network monitor from Python, against Tests/Servers/idempotency_server.py
(COURIER_TEST_IDEMPOTENCY); one test starts its own copy on a port nothing listened on."""
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

IDEMPOTENCY = os.environ["COURIER_TEST_IDEMPOTENCY"]
SERVERS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "Tests", "Servers")


def wait_until(condition, seconds=10):
    end = time.time() + seconds
    while not condition() and time.time() < end:
        time.sleep(0.01)
    return condition()


def reserved_port():
    """A port nothing listens on, kept by a bound SO_REUSEPORT socket that never listens (so
    nothing else takes it) until the test's own server listens there too."""
    reservation = socket.socket()
    reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    reservation.bind(("127.0.0.1", 0))
    return reservation.getsockname()[1], reservation


class OutboxTests(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="courier-py-outbox-")

    def test_a_frozen_request_is_sent_with_its_key_and_forgotten_when_answered(self):
        outcomes = []
        with courier.Outbox(os.path.join(self.directory, "o")) as outbox:
            outbox.on_finished("note", lambda *outcome: outcomes.append(outcome))
            with courier.Engine(IDEMPOTENCY, outbox=outbox) as engine:
                response = engine.post("/submit", content=b"from python", freeze="note")
                self.assertEqual(response.status, 201)
                key = response.text.split()[1]
                self.assertTrue(wait_until(lambda: outcomes))
                self.assertEqual(outcomes[0], (key, "note", 0, 201))
                self.assertEqual(len(outbox), 0)
                keys = engine.get("/keys").json()
                self.assertEqual(keys[key]["body"], "from python")

    def test_one_owner_and_no_outbox(self):
        path = os.path.join(self.directory, "o")
        with courier.Outbox(path):
            with self.assertRaises(courier.CourierError) as raised:
                courier.Outbox(path)
            self.assertEqual(raised.exception.code, courier.E_OUTBOX_LOCKED)
        with courier.Engine(IDEMPOTENCY) as engine:
            with self.assertRaises(courier.CourierError):
                engine.post("/submit", content=b"x", freeze="note")

    def test_a_request_waits_until_its_host_is_back(self):
        port, reservation = reserved_port()
        self.addCleanup(reservation.close)
        results = []
        with courier.Outbox(os.path.join(self.directory, "o"), retry=0.2) as outbox:
            with courier.Engine("http://127.0.0.1:%d" % port, outbox=outbox) as engine:
                # A daemon: a failed check must not leave the interpreter waiting for it at exit.
                sender = threading.Thread(daemon=True, target=lambda: results.append(
                    engine.post("/submit", content=b"waited", freeze="note", timeouts={"connect": 1})))
                sender.start()
                self.assertTrue(wait_until(lambda: len(outbox) == 1), "journaled while the host is down")
                server = subprocess.Popen([sys.executable, os.path.join(SERVERS, "idempotency_server.py"), str(port)],
                                          stdout=subprocess.PIPE)
                try:
                    self.assertTrue(server.stdout.readline(), "the server started")
                    sender.join(20)
                    self.assertEqual([r.status for r in results], [201])
                    self.assertEqual(len(outbox), 0)
                finally:
                    # SIGKILL: the test's children may inherit a mask that blocks SIGTERM (the
                    # runner's threads block it), and terminate() then waits forever.
                    server.kill()
                    server.wait()
                    server.stdout.close()

    def test_the_network_and_its_override(self):
        kind, interface = courier.network_status()
        self.assertIn(kind, ("none", "wired", "wifi", "cellular"))
        seen = []
        watch = courier.watch_network(lambda *status: seen.append(status))
        previous = courier.queue_width()
        courier.follow_network()
        try:
            courier.set_network_override("cellular")
            self.assertEqual(courier.network_status(), ("cellular", "override"))
            self.assertEqual(courier.queue_width(), 2, "the width follows the network")
            self.assertTrue(wait_until(lambda: ("cellular", "override") in seen))
        finally:
            courier.set_network_override(None)
            courier.unwatch_network(watch)
            courier.set_queue_width(previous)
        self.assertEqual(courier.network_status()[0], kind)
        with self.assertRaises(courier.CourierError):
            courier.set_network_override("carrier pigeon")


    def test_host_reachability(self):
        before = courier.host_reachability("127.0.0.13")
        self.assertEqual((before.host, before.reachable, before.reason), ("127.0.0.13", True, "routed"))
        self.assertIn(before.interface, ("lo", ""))
        with courier.Engine() as engine:
            with self.assertRaises(courier.CourierError):
                engine.get("http://127.0.0.13:1/")
        after = courier.host_reachability("127.0.0.13")
        self.assertEqual((after.reachable, after.reason), (False, "connect-failed"))
        self.assertEqual(courier.host_reachability("nowhere.invalid"),
                         courier.Reachability("nowhere.invalid", False, "unresolvable", ""))

    def test_network_changes_through_the_engines_descriptor(self):
        async def watch():
            with courier.Engine() as engine:
                changes = engine.network_changes()
                first = asyncio.ensure_future(changes.__anext__())
                while not engine._network_queues:  # the watch is on once the generator has started
                    await asyncio.sleep(0)
                courier.set_network_override("wifi")
                seen = await asyncio.wait_for(first, 10)
                # Requests and changes share the descriptor.
                response = await engine.fetch("GET", IDEMPOTENCY + "/keys")
                courier.set_network_override(None)
                back = await asyncio.wait_for(changes.__anext__(), 10)
                await changes.aclose()
                return seen, response.status, back

        try:
            seen, status, back = asyncio.run(watch())
        finally:
            courier.set_network_override(None)
        self.assertEqual(seen, ("wifi", "override"))
        self.assertEqual(status, 200)
        self.assertEqual(back, courier.network_status())


if __name__ == "__main__":
    unittest.main()
