extension Transfer: CustomReflectable {
    /// No children: from submission to completion only the loop thread may read a transfer's
    /// fields, and a mirror is read wherever `dump`, a debugger or a failed test expectation asks
    /// (a reflected body would also be one child per byte). `Response`'s mirror shows a finished
    /// transfer's result.
    package var customMirror: Mirror { Mirror(self, children: KeyValuePairs<String, Any>(), displayStyle: .class) }
}
