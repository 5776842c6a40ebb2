import Courier
import CourierCore

// courier_json_pretty: OCNet's JSON pretty printer (JSONValue.prettyPrinted) for C.

@_cdecl("courier_json_pretty")
public func courier_json_pretty(_ json: UnsafePointer<CChar>?, _ length: Int, _ out: UnsafeMutablePointer<CChar>?,
                                _ capacity: Int, _ needed: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let json, let needed, capacity == 0 || out != nil else { return CourierError.Code.misuse.c }
    let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(json).assumingMemoryBound(to: UInt8.self), count: length))
    do {
        writeText(try JSONValue(parsing: bytes).prettyPrinted(), out, capacity, needed)
        return COURIER_OK
    } catch {
        return error.code.c
    }
}
