"""Requests over a Unix domain socket from Python, against the Docker-Engine-shaped server
(Tests/Servers/uds_server.py) this test starts on a socket file and on an abstract name: httpx's
``HTTPTransport(uds=...)`` and ``Engine(unix_socket=...)``. Started by the Swift suite like
test_courier.py."""

import asyncio
import os
import subprocess
import sys
import tempfile
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402
import courier as httpx  # noqa: E402

SERVER = os.path.join(os.path.dirname(__file__), "..", "..", "..", "Tests", "Servers", "uds_server.py")


def start(where):
    """uds_server.py listening at `where` (a path, or @NAME), once it says it listens."""
    server = subprocess.Popen([sys.executable, SERVER, where], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              env=dict(os.environ, COURIER_TEST_PARENT=str(os.getpid())), text=True)
    server.stdout.readline()
    return server


class UnixSocketTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix="courier-uds-")
        cls.path = os.path.join(cls.directory, "docker.sock")
        cls.name = "courier-py-uds-%d" % os.getpid()
        cls.servers = [start(cls.path), start("@" + cls.name)]

    @classmethod
    def tearDownClass(cls):
        for server in cls.servers:
            server.kill()
            server.wait()
        if os.path.exists(cls.path):
            os.unlink(cls.path)
        os.rmdir(cls.directory)

    def test_httpx_transport_uds_as_docker_users_write_it(self):
        transport = httpx.HTTPTransport(uds=self.path)
        with httpx.Client(transport=transport, base_url="http://docker") as client:
            ping = client.get("/_ping")
            self.assertEqual((ping.status_code, ping.text, ping.headers["api-version"]), (200, "OK", "1.43"))
            self.assertEqual(client.get("/v1.43/containers/json").json()[0]["Names"], ["/courier"])
            self.assertEqual(client.get("/host").text, "docker", "the Host field is the URL's")

    def test_async_client_and_an_abstract_name(self):
        async def run():
            async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds="\0" + self.name)) as client:
                return await client.post("http://localhost/echo", content=b"abstract")
        self.assertEqual(asyncio.run(run()).text, "abstract")

    def test_engine_unix_socket_and_no_proxy(self):
        with courier.Engine("http://localhost", unix_socket=self.path, proxy="http://127.0.0.1:9") as engine:
            self.assertEqual(engine.request("GET", "/_ping").body, b"OK")

    def test_bad_sockets(self):
        with self.assertRaises(courier.UsageError) as long:
            courier.Engine("http://localhost", unix_socket="/tmp/" + "x" * 200)
        self.assertIn("107 bytes", str(long.exception))
        with courier.Engine("http://localhost", unix_socket=os.path.join(self.directory, "missing.sock")) as engine:
            with self.assertRaises(httpx.ConnectError) as missing:
                engine.request("GET", "/_ping")
        self.assertIn("ENOENT", str(missing.exception))


if __name__ == "__main__":
    unittest.main()
