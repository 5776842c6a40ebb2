/// An immutable value behind one reference: for a rarely set, large field of a value type that is
/// created and destroyed often (an optional box costs one word and one nil check to destroy).
package final class Box<Value: Sendable>: Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
}
