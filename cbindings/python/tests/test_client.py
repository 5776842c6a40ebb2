"""The httpx-shaped surface: Client, AsyncClient, module functions, Response, Headers, Timeout and
the exception hierarchy, against the suite's nginx and scripted server (see test_courier.py)."""

import asyncio
import datetime
import os
import sys
import threading
import unittest
from urllib.parse import quote

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

NGINX = os.environ["COURIER_TEST_NGINX"]
SCRIPTED = os.environ["COURIER_TEST_SCRIPTED"]
HTTPS = os.environ.get("COURIER_TEST_HTTPS")
SELFSIGNED = os.environ.get("COURIER_TEST_SELFSIGNED")
CLIENTAUTH = os.environ.get("COURIER_TEST_CLIENTAUTH")
CERTS = os.environ.get("COURIER_TEST_CERTS")


class ClientTests(unittest.TestCase):
    def test_a_client_answers_every_status_without_raising(self):
        with courier.Client(base_url=SCRIPTED) as client:
            response = client.get("/status", params={"code": 404, "body": "missing"})
            self.assertEqual(response.status_code, 404)
            self.assertEqual(response.reason_phrase, "Status")
            self.assertEqual(response.content, b"missing")
            self.assertFalse(response.is_success)
            self.assertTrue(response.is_client_error and response.is_error)
            with self.assertRaises(courier.HTTPStatusError) as caught:
                response.raise_for_status()
            self.assertIs(caught.exception.response, response)
            self.assertEqual(caught.exception.code, courier._native.E_HTTP_STATUS)
            self.assertIn("404", str(caught.exception))
            ok = client.get("/echo")
            self.assertIs(ok.raise_for_status(), ok)
            self.assertEqual(ok.http_version, "HTTP/1.1")
            self.assertEqual((ok.request.method, ok.request.url), ("GET", SCRIPTED + "/echo"))
            self.assertIsInstance(ok.elapsed, datetime.timedelta)
            self.assertGreater(ok.elapsed.total_seconds(), 0)

    def test_module_functions(self):
        response = courier.get(NGINX + "/small")
        self.assertEqual((response.status_code, len(response.content)), (200, 100))
        posted = courier.post(SCRIPTED + "/echo", json={"a": [1, 2]}).json()
        self.assertEqual((posted["method"], posted["body"]), ("POST", '{"a": [1, 2]}'))
        self.assertEqual(courier.put(SCRIPTED + "/echo", content=b"x").json()["method"], "PUT")
        self.assertEqual(courier.patch(SCRIPTED + "/echo", data={"k": "v"}).json()["body"], "k=v")
        self.assertEqual(courier.delete(SCRIPTED + "/echo").json()["method"], "DELETE")
        self.assertEqual(courier.options(SCRIPTED + "/echo").json()["method"], "OPTIONS")
        self.assertEqual(courier.head(NGINX + "/small").headers["content-length"], "100")
        self.assertEqual(courier.request("GET", NGINX + "/small").status_code, 200)

    def test_params_keep_repeated_keys_and_merge_with_the_clients(self):
        with courier.Client(base_url=SCRIPTED, params={"api": "1"}) as client:
            echo = client.get("/echo", params={"tag": ["a", "b"], "n": 3}).json()
            self.assertEqual(echo["target"], "/echo?api=1&tag=a&tag=b&n=3")
            pairs = client.get("/echo", params=[("x", "1"), ("x", "2")]).json()
            self.assertEqual(pairs["target"], "/echo?api=1&x=1&x=2")

    def test_headers_are_a_case_insensitive_multi_value_mapping(self):
        headers = courier.Headers([("Set-Cookie", "a=1"), ("Content-Type", "text/plain"), ("set-cookie", "b=2")])
        self.assertEqual(headers["SET-COOKIE"], "a=1, b=2")
        self.assertEqual(headers.get_list("set-cookie"), ["a=1", "b=2"])
        self.assertEqual(list(headers), ["set-cookie", "content-type"])
        self.assertEqual(len(headers), 2)
        self.assertIn("content-TYPE", headers)
        self.assertNotIn("Location", headers)
        self.assertIsNone(headers.get("location"))
        self.assertEqual(headers.multi_items()[2], ("set-cookie", "b=2"))
        self.assertEqual(dict(headers)["content-type"], "text/plain")
        self.assertEqual(headers, courier.Headers([("content-type", "text/plain"), ("SET-COOKIE", "a=1"), ("Set-Cookie", "b=2")]))
        self.assertNotEqual(headers, courier.Headers([("Content-Type", "text/plain")]))
        with self.assertRaises(KeyError):
            headers["missing"]
        with courier.Client() as client:
            response = client.get(NGINX + "/small")
            self.assertEqual(response.headers["CONTENT-LENGTH"], "100")
            self.assertEqual(response.header("content-length"), "100")

    def test_text_follows_the_charset_and_never_replaces_silently(self):
        with courier.Client(base_url=SCRIPTED) as client:
            latin = client.get("/bytes", params={"hex": "e9", "type": "text/plain; charset=ISO-8859-1"})
            self.assertEqual((latin.encoding, latin.text), ("ISO-8859-1", "\u00e9"))
            broken = client.get("/bytes", params={"hex": "41ff42", "type": "text/plain; charset=utf-8"})
            with self.assertRaises(courier.DecodingError) as caught:
                broken.text
            self.assertIn("byte 1", str(caught.exception))
            self.assertIsInstance(caught.exception, courier.ResponseFormatError)
            self.assertEqual(broken.decode(errors="replace"), "A\ufffdB")
            unknown = client.get("/bytes", params={"hex": "41", "type": "text/plain; charset=x-none"})
            with self.assertRaises(courier.DecodingError):
                unknown.text

    def test_auto_referer_names_the_hop_each_request_came_from(self):
        target = "/redirect?to=" + quote("/redirect?to=/echo", safe="")
        with courier.Client(base_url=SCRIPTED) as client:
            echo = client.get(target, follow_redirects=True, auto_referer=True).json()
            referers = [value for name, value in echo["headers"] if name.lower() == "referer"]
            self.assertEqual(referers, [SCRIPTED + "/redirect?to=/echo"])
            plain = client.get(target, follow_redirects=True).json()
            self.assertFalse([1 for name, _ in plain["headers"] if name.lower() == "referer"])

    def test_redirects_only_when_asked_and_the_history_of_each_hop(self):
        target = "/redirect?code=301&to=" + quote("/redirect?code=302&to=/echo", safe="")
        with courier.Client(base_url=SCRIPTED) as client:
            unfollowed = client.get(target)
            self.assertEqual((unfollowed.status_code, unfollowed.history), (301, []))
            self.assertTrue(unfollowed.is_redirect)
            followed = client.get(target, follow_redirects=True)
            self.assertEqual(followed.status_code, 200)
            self.assertEqual([hop.status_code for hop in followed.history], [301, 302])
            self.assertEqual(followed.history[0].url, SCRIPTED + target)
            self.assertEqual(followed.history[0].reason_phrase, "Redirect")
            self.assertEqual(followed.history[1].headers["location"], "/echo")
            self.assertEqual((followed.history[1].request.method, followed.history[1].request.url), ("GET", followed.history[1].url))
            self.assertEqual(followed.url, SCRIPTED + "/echo")
        with courier.Client(base_url=SCRIPTED, follow_redirects=True, max_redirects=3) as client:
            with self.assertRaises(courier.TooManyRedirects):
                client.get("/redirect-loop")

    def test_cookies_persist_across_the_clients_requests(self):
        cookies = os.environ.get("COURIER_TEST_COOKIES")
        if not cookies:
            self.skipTest("no cookie server")
        with courier.Client(base_url=cookies) as client:
            client.get("/set", params={"c": "session=s1"})
            self.assertEqual(len(client.cookies), 1)
            self.assertEqual(client.get("/echo").content, b"session=s1")
        with courier.Client(base_url=SCRIPTED, cookies={"a": "1", "b": "2"}) as client:
            sent = dict(client.get("/echo").json()["headers"])
            self.assertEqual(sent.get("Cookie"), "a=1; b=2")

    def test_trailers_bytes_and_addresses(self):
        with courier.Client(base_url=SCRIPTED) as client:
            chunked = client.get("/chunked")
            self.assertEqual(chunked.content, b"chunk encoded")
            self.assertEqual(chunked.trailers["x-check"], "yes")
            self.assertEqual(chunked.bytes_received, len(b"chunk encoded"))
            self.assertGreater(chunked.bytes_sent, len(b"GET /chunked HTTP/1.1\r\n"))
            host_port = SCRIPTED.split("//", 1)[1]
            self.assertEqual(chunked.remote_address, host_port)
            self.assertIsNone(chunked.tls_resumed)

    def test_auth_and_headers_merge(self):
        with courier.Client(base_url=SCRIPTED, headers={"X-A": "client", "X-B": "client"}, auth=("u", "p")) as client:
            sent = dict(client.get("/echo", headers={"x-b": "request"}).json()["headers"])
            self.assertEqual((sent["X-A"], sent["x-b"]), ("client", "request"))
            self.assertEqual(sent["Authorization"], "Basic dTpw")
            plain = dict(client.get("/echo", auth=None).json()["headers"])
            self.assertNotIn("Authorization", plain)

    def test_a_closed_client_refuses(self):
        client = courier.Client()
        client.close()
        self.assertTrue(client.is_closed)
        with self.assertRaises(courier.UsageError):
            client.get(NGINX + "/small")

    def test_streaming_through_a_client(self):
        with courier.Client(base_url=NGINX) as client:
            with client.stream("GET", "/small") as response:
                self.assertEqual(response.status_code, 200)
                self.assertIs(response.raise_for_status(), response)
                streamed = b"".join(response.iter_bytes())
            self.assertEqual((len(streamed), streamed), (100, client.get("/small").content))


class PackagingTests(unittest.TestCase):
    @unittest.skipUnless(os.environ.get("COURIER_TEST_INSTALLED"), "runs from the installed wheel")
    def test_the_installed_package_and_its_bundled_library(self):
        self.assertIn("site-packages", courier.__file__)
        self.assertTrue(courier._native.lib._name.endswith(os.path.join("courier", "libcourier.so.1")),
                        courier._native.lib._name)
        here = os.path.dirname(courier.__file__)
        self.assertTrue(os.path.exists(os.path.join(here, "py.typed")))

    def test_an_unusable_library_is_named_in_the_import_error(self):
        import subprocess
        environment = dict(os.environ, COURIER_LIBRARY="/nonexistent/libcourier.so")
        environment.pop("COURIER_TEST_INSTALLED", None)
        # From a directory where only the source package is importable, with nothing installed found
        # first: the error lists the candidate that failed.
        source = os.path.join(os.path.dirname(__file__), "..")
        run = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import courier._native" % source],
                             env=dict(environment, LD_LIBRARY_PATH=""), capture_output=True, text=True)
        if run.returncode == 0:
            self.skipTest("a libcourier is installed system-wide")
        self.assertIn("/nonexistent/libcourier.so", run.stderr)
        self.assertIn("ImportError", run.stderr)


class TimeoutTests(unittest.TestCase):
    def test_the_value(self):
        self.assertEqual(courier.Timeout(5.0).as_limits(),
                         {"connect": 5.0, "first_byte": 5.0, "idle": 5.0, "send": 5.0, "queue": 5.0, "total": None})
        split = courier.Timeout(5.0, read=1.0, write=None).as_limits()
        self.assertEqual((split["first_byte"], split["idle"], split["send"]), (1.0, 1.0, None))
        mixed = courier.Timeout(10.0, connect=1.0, total=30)
        self.assertEqual((mixed.connect, mixed.read, mixed.write, mixed.pool, mixed.total), (1.0, 10.0, 10.0, 10.0, 30))
        self.assertEqual(courier.Timeout(None).as_limits()["connect"], None)
        self.assertEqual(courier.Timeout(mixed), mixed)
        with self.assertRaises(courier.UsageError):
            courier.Timeout(connect=1.0)
        with self.assertRaises(courier.UsageError):
            courier.Timeout(-1)

    def test_a_read_timeout(self):
        with courier.Client(base_url=SCRIPTED, timeout=courier.Timeout(5.0, read=0.3)) as client:
            with self.assertRaises(courier.ReadTimeout) as caught:
                client.get("/silence")
            self.assertIsInstance(caught.exception, courier.TimeoutException)
            self.assertIsInstance(caught.exception, courier.TransportError)
            self.assertEqual(caught.exception.primary, 8)
        with courier.Client(base_url=SCRIPTED) as client:
            with self.assertRaises(courier.TotalTimeout):
                client.get("/slow", params={"ms": 2000}, timeout=courier.Timeout(None, total=0.2))
            # A number is every phase's limit; None lifts them all.
            self.assertEqual(client.get("/slow", params={"ms": 50}, timeout=None).status_code, 200)
            with self.assertRaises(courier.ReadTimeout):
                client.get("/silence", timeout=0.2)


    def test_read_and_write_timeouts_apart(self):
        # httpx's two limits, each its own: a short read limit is not stretched by a long write
        # limit, nor the reverse. (The total is the guard: without the split it would fire first.)
        guard = dict(connect=5.0, pool=5.0, total=10.0)
        with courier.Client(base_url=SCRIPTED) as client:
            with self.assertRaises(courier.ReadTimeout):
                client.get("/silence-mid-body", params={"s": 20}, timeout=courier.Timeout(read=0.3, write=30.0, **guard))
        import socket
        with socket.socket() as deaf:  # (accepted by the kernel, never read)
            deaf.bind(("127.0.0.1", 0))
            deaf.listen(1)
            url = "http://127.0.0.1:%d/upload" % deaf.getsockname()[1]

            def body():
                for _ in range(1024):
                    yield b"u" * (1 << 20)
            with courier.Client() as client:
                with self.assertRaises(courier.WriteTimeout) as caught:
                    client.post(url, content=body(), timeout=courier.Timeout(read=30.0, write=0.3, **guard))
                self.assertIsInstance(caught.exception, courier.TimeoutException)
                self.assertIn("stopped reading the request body", str(caught.exception))


class ErrorTests(unittest.TestCase):
    def test_each_failure_has_its_class_and_code(self):
        with courier.Client() as client:
            with self.assertRaises(courier.ConnectError) as caught:
                client.get("http://127.0.0.1:9/")
            self.assertIsInstance(caught.exception, courier.NetworkError)
            self.assertEqual(caught.exception.primary, 7)
            with self.assertRaises(courier.UnsupportedProtocol):
                client.get("ftp://127.0.0.1/")
            with self.assertRaises(courier.InvalidURL):
                client.get("http://[::1/")
            with self.assertRaises(courier.RemoteProtocolError):
                client.get(SCRIPTED + "/truncated")
            with self.assertRaises(courier.RemoteProtocolError):
                client.get(SCRIPTED + "/garbage-status")
            with self.assertRaises(courier.LocalProtocolError):
                client.get(SCRIPTED + "/echo", headers={"X-Bad": "a\r\nb"})
            with self.assertRaises(courier.DecodingError):
                client.get(SCRIPTED + "/unknown-coding")
        for code in (6, 7, 8 | 2 << 8, 22, 24, 15, 29, 99):
            error = courier._errors.error_for(code, "m")
            self.assertIsInstance(error, courier.CourierError)
            self.assertEqual((error.code, error.message), (code, "m"))
        self.assertIsInstance(courier._errors.error_for(courier._native.E_DNS_PROXY), courier.ProxyError)
        self.assertIs(type(courier._errors.error_for(99)), courier.CourierError)

    @unittest.skipUnless(SELFSIGNED, "no TLS servers")
    def test_tls_errors_say_why(self):
        with courier.Client() as client:
            with self.assertRaises(courier.TLSError) as caught:
                client.get(SELFSIGNED + "/small")
            self.assertIn("certificate", caught.exception.reason.lower())
            self.assertEqual(caught.exception.primary, 22)
            self.assertEqual(caught.exception.kind, "untrusted", "a self-signed certificate leads to no trusted root")

    @unittest.skipUnless(CLIENTAUTH and CERTS, "no TLS servers")
    def test_cert_presents_a_client_certificate(self):
        ca = CERTS + "/ca.pem"
        with courier.Client(verify=ca) as client:
            self.assertEqual(client.get(CLIENTAUTH + "/small").status_code, 400, "nginx's answer without one")
        with courier.Client(verify=ca, cert=(CERTS + "/client.pem", CERTS + "/client.key")) as client:
            self.assertEqual(client.get(CLIENTAUTH + "/small").status_code, 200)
        with courier.Client(verify=ca, cert=(CERTS + "/client.pem", CERTS + "/client-encrypted.key", "secret")) as client:
            self.assertEqual(client.get(CLIENTAUTH + "/small").status_code, 200)
        with courier.Client(verify=ca, cert=(CERTS + "/client.pem", CERTS + "/client-encrypted.key", "wrong")) as client:
            with self.assertRaises(courier.TLSError) as caught:
                client.get(CLIENTAUTH + "/small")
            self.assertEqual(caught.exception.kind, "client_certificate")

    @unittest.skipUnless(HTTPS and CERTS, "no TLS servers")
    def test_verify_takes_a_ca_path(self):
        with courier.Client(verify=CERTS + "/ca.pem") as client:
            response = client.get(HTTPS + "/small")
            self.assertEqual(response.status_code, 200)
            self.assertEqual(response.tls_verify_result, 0)
            self.assertIn(response.tls_resumed, (True, False))


class AsyncClientTests(unittest.TestCase):
    def test_requests_from_one_loop(self):
        async def main():
            async with courier.AsyncClient(base_url=SCRIPTED) as client:
                many = await asyncio.gather(*(client.get("/echo", params={"i": i}) for i in range(6)))
                missing = await client.get("/status", params={"code": 500})
                posted = await client.post("/echo", json={"k": 1})
                return [r.json()["query"]["i"] for r in many], missing.status_code, posted.json()["body"]
        numbers, status, body = asyncio.run(main())
        self.assertEqual(numbers, [str(i) for i in range(6)])
        self.assertEqual((status, body), (500, '{"k": 1}'))

    def test_one_client_on_several_loops_in_several_threads(self):
        client = courier.AsyncClient(base_url=NGINX)
        results, errors = [], []

        def worker():
            async def main():
                return [(await client.get("/small")).status_code for _ in range(5)]
            try:
                results.append(asyncio.run(main()))
            except BaseException as error:
                errors.append(error)
        threads = [threading.Thread(target=worker) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        asyncio.run(client.aclose())
        self.assertEqual(errors, [])
        self.assertEqual(results, [[200] * 5] * 3)

    def test_cancelling_the_task_cancels_the_request(self):
        async def main():
            async with courier.AsyncClient(base_url=SCRIPTED) as client:
                task = asyncio.ensure_future(client.get("/silence"))
                # Until the request runs in the shared queue (the server answers /silence never).
                while courier.activity()[0] == 0:
                    await asyncio.sleep(0.005)
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    return "cancelled"
                return "finished"
        self.assertEqual(asyncio.run(asyncio.wait_for(main(), 10)), "cancelled")

    def test_async_streaming_and_errors(self):
        async def main():
            async with courier.AsyncClient(base_url=NGINX) as client:
                async with client.stream("GET", "/small") as response:
                    body = await response.aread()
                whole = (await client.get("/small")).content
                try:
                    await client.get("http://127.0.0.1:9/")
                except courier.ConnectError as error:
                    return body == whole and len(body), error.primary
        self.assertEqual(asyncio.run(main()), (100, 7))


if __name__ == "__main__":
    unittest.main()
