import CourierCore

extension HTTPOperation {
    /// Makes the request conditional on the resource's modification time (curl's `-z`,
    /// CURLOPT_TIMECONDITION): sent as `If-Modified-Since` (the server answers 304 when it was
    /// not modified since), `If-Unmodified-Since` (412 when it was) or `Last-Modified`. nil
    /// removes the three fields.
    ///
    /// ```swift
    /// op.setTimeCondition(.modifiedSince(lastSync))   // epoch seconds
    /// ```
    public func setTimeCondition(_ condition: TimeCondition?) {
        draft.setTimeCondition(condition)
    }
}

extension RequestDraft {
    /// The condition's field in place of any earlier one (also the C ABI's and Python's).
    package mutating func setTimeCondition(_ condition: TimeCondition?) {
        for name in ["If-Modified-Since", "If-Unmodified-Since", "Last-Modified"] { headers.remove(name: name) }
        if let field = condition?.field { headers.add(name: field.name, value: field.value) }
    }
}
