"""httpx's DigestAuth against a real server: Apache httpd's mod_auth_digest (RFC 7616, MD5,
qop auth), launched here by the interop launcher (Tests/Interop/launch.py apache). The mock
tests in test_httpx_habits.py check the formula; this checks that a server that computes it
independently lets the same code in, and keeps out a wrong password."""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier as httpx  # noqa: E402  (used as an httpx user would)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
LAUNCH = os.path.join(ROOT, "Tests", "Interop", "launch.py")
CERTS = os.environ["COURIER_TEST_CERTS"]
USER, PASSWORD = "alice", "wonderland"  # launch.py's DIGEST_USER and DIGEST_PASSWORD
SECRET = b"behind mod_auth_digest\n"


class DigestAgainstApacheTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists("/usr/sbin/apache2"):
            raise unittest.SkipTest("Apache httpd is not installed (Debian: apache2; make test installs it)")
        cls.work = tempfile.mkdtemp(prefix="courier-digest-")
        html = os.path.join(cls.work, "html")
        os.makedirs(os.path.join(html, "digest"))
        with open(os.path.join(html, "digest", "secret"), "wb") as f:
            f.write(SECRET)
        for path in (cls.work, html, os.path.join(html, "digest")):
            os.chmod(path, 0o755)  # (Apache's workers run as www-data when the tests run as root)
        os.chmod(os.path.join(html, "digest", "secret"), 0o644)
        cls.server = subprocess.Popen([sys.executable, LAUNCH, "apache", os.path.join(cls.work, "server"), html, CERTS],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        started = json.loads(cls.server.stdout.readline() or b"{}")
        if "http" not in started:
            cls.tearDownClass()
            raise AssertionError("Apache did not start: %r" % started)
        cls.base = "http://127.0.0.1:%d" % started["http"]

    @classmethod
    def tearDownClass(cls):
        cls.server.stdin.close()  # (the launcher stops Apache when its stdin closes)
        cls.server.wait(timeout=30)
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_sync_client_is_let_in_and_a_wrong_password_is_not(self):
        with httpx.Client(base_url=self.base) as client:
            self.assertEqual(client.get("/digest/secret").status_code, 401)
            for _ in range(2):  # (Apache checks the signed URI, query included, against the request's)
                response = client.get("/digest/secret?view=1", auth=httpx.DigestAuth(USER, PASSWORD))
                self.assertEqual((response.status_code, response.content), (200, SECRET))
            # A request with a body is sent again whole once the challenge is answered.
            posted = client.request("GET", "/digest/secret", content=b"x" * 1000, auth=httpx.DigestAuth(USER, PASSWORD))
            self.assertEqual(posted.status_code, 200)
            refused = client.get("/digest/secret", auth=httpx.DigestAuth(USER, "not-" + PASSWORD))
            self.assertEqual(refused.status_code, 401)
            self.assertIn("Digest", refused.headers["www-authenticate"])

    def test_async_client_as_a_client_wide_auth(self):
        async def main():
            async with httpx.AsyncClient(base_url=self.base, auth=httpx.DigestAuth(USER, PASSWORD)) as client:
                responses = await asyncio.gather(*(client.get("/digest/secret") for _ in range(4)))
                return [(r.status_code, r.content) for r in responses]
        self.assertEqual(asyncio.run(main()), [(200, SECRET)] * 4)


if __name__ == "__main__":
    unittest.main()
