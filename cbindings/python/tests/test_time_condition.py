"""curl's time conditions from Python (``time_condition=``) against nginx (COURIER_TEST_NGINX),
which answers If-Modified-Since at the file's exact time with 304 and If-Unmodified-Since
before it with 412. Started by the Swift suite like test_courier.py."""

import datetime
import email.utils
import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402

NGINX = os.environ["COURIER_TEST_NGINX"]


class TimeConditionTests(unittest.TestCase):
    def test_statuses(self):
        with courier.Engine(NGINX, accepted_status=(0, 1000)) as engine:
            modified = email.utils.parsedate_to_datetime(engine.get("/small").headers["last-modified"])
            stamp = modified.timestamp()
            self.assertEqual(engine.get("/small", time_condition=("modified_since", modified)).status, 304)
            self.assertEqual(engine.get("/small", time_condition=("modified_since", stamp - 3600)).status, 200)
            self.assertEqual(engine.get("/small", time_condition=("unmodified_since", stamp - 3600)).status, 412)
            naive = modified.astimezone(datetime.timezone.utc).replace(tzinfo=None)
            self.assertEqual(engine.get("/small", time_condition=("unmodified_since", naive)).status, 200, "naive is UTC")
            with self.assertRaises(courier.CourierError):
                engine.get("/small", time_condition=("newer", stamp))
            for absurd in (-(1 << 70), 1 << 63, -(1 << 62)):  # (beyond a C int64, or no HTTP date's)
                with self.assertRaises(courier.UsageError):
                    engine.get("/small", time_condition=("modified_since", absurd))


if __name__ == "__main__":
    unittest.main()
