import Testing
@testable import Courier
@testable import CourierCore

/// OCNet's JSON pretty printer (`JSONValue.prettyPrinted`, `courier_json_pretty`, Python's
/// `courier.pretty_json`): indentation, document order, numbers as written, and text readable.
@Suite("JSON pretty printer")
struct JSONPrettyTests {
    @Test func indentedInDocumentOrderWithTextAsItself() throws {
        let value = try JSONValue(parsing: #"{"name":"\u5f20\u4e09 🚀","z":1,"a":[1.50,true,null,{"k":"v"}],"e":{},"f":[],"q":"\"\\\n"}"#)
        #expect(value.prettyPrinted() == """
            {
              "name": "张三 🚀",
              "z": 1,
              "a": [
                1.50,
                true,
                null,
                {
                  "k": "v"
                }
              ],
              "e": {},
              "f": [],
              "q": "\\"\\\\\\n"
            }
            """)
        #expect(try JSONValue(parsing: "[]").prettyPrinted() == "[]")
        #expect(try JSONValue(parsing: #""é""#).prettyPrinted() == #""é""#)
        #expect(try JSONValue(parsing: #"{"a":[1]}"#).prettyPrinted(indent: 4) == "{\n    \"a\": [\n        1\n    ]\n}")
    }

    @Test func fromC() async throws {
        let bin = try await CExamples.shared.directory()
        let run = try await runProcess(bin + "/json", [])
        #expect(run.status == 0 && run.stdout.contains("all checks passed"), "\(run.stdout)\(run.stderr)")
    }

    @Test func whatItPrintsParsesBackToTheSameValue() throws {
        let text = #"{"id":12345678901234567890,"nested":[[[]],{"x":{"y":[-0.0,1e400]}}],"ctl":"\u0001"}"#
        let value = try JSONValue(parsing: text)
        #expect(try JSONValue(parsing: value.prettyPrinted()) == value)
        #expect(value.prettyPrinted().contains("12345678901234567890"), "a large ID keeps its digits")
        #expect(value.prettyPrinted().contains(#""\u0001""#), "control characters stay escaped")
    }
}
