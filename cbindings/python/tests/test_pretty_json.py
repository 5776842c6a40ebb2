"""OCNet's JSON pretty printer from Python (``courier.pretty_json``). No server needed."""

import os
import sys
import unittest

if not os.environ.get("COURIER_TEST_INSTALLED"):  # else the installed package (a wheel in a venv)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import courier  # noqa: E402


class PrettyJSONTests(unittest.TestCase):
    def test_indented_in_document_order_with_text_as_itself(self):
        text = '{"name":"\\u5f20\\u4e09 \U0001F680","z":1,"a":[1.50,true,null],"e":{},"id":12345678901234567890}'
        self.assertEqual(courier.pretty_json(text),
                         '{\n  "name": "张三 🚀",\n  "z": 1,\n  "a": [\n    1.50,\n    true,\n    null\n  ],\n'
                         '  "e": {},\n  "id": 12345678901234567890\n}')
        self.assertEqual(courier.pretty_json(b"[]"), "[]", "bytes, as a response's content")

    def test_not_json(self):
        for bad in (b"{", b"", "[1,]"):
            with self.assertRaises(courier.ResponseFormatError):
                courier.pretty_json(bad)


if __name__ == "__main__":
    unittest.main()
