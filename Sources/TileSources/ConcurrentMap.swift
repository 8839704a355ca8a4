extension Array where Element: Sendable {
    /// `map` with `body` run in child tasks, at most `maxInFlight` at once (less than 1 counts
    /// as 1), the results in the elements' order. The first error thrown is rethrown: the
    /// tasks still running are cancelled (their `Task.isCancelled` turns true) and no more are
    /// started.
    public func concurrentMap<Mapped: Sendable>(maxInFlight: Int,
                                                _ body: @escaping @Sendable (Element) async throws -> Mapped) async throws -> [Mapped] {
        var results = [Mapped?](repeating: nil, count: count)
        try await concurrentForEach(maxInFlight: maxInFlight, body) { index, mapped in
            results[index] = mapped
            return true
        }
        // Every index was filled: the group ended without an error.
        return results.compactMap { $0 }
    }

    /// The project's one bounded task group (seeding, pyramid tiles, snapshot tiles), so that
    /// parallel work never starts one task per item: `body` runs over the elements in child
    /// tasks, at most `maxInFlight` at once (less than 1 counts as 1), and each result is
    /// handed to `take` on the calling task as it comes (in the order they finish), with its
    /// element's index. When `take` returns false no more are started; those in flight are
    /// let finish, not cancelled (cancelling a fetch can deadlock Foundation's URLSession on
    /// Linux, see Seeder), and are handed to `take` too. An error thrown by `body` or `take`
    /// cancels those in flight and is rethrown.
    public func concurrentForEach<Result: Sendable>(maxInFlight: Int, _ body: @escaping @Sendable (Element) async throws -> Result,
                                                    handing take: (_ index: Int, Result) throws -> Bool) async throws {
        let limit = Swift.max(1, maxInFlight)
        // A plain loop over an index, with no nested function capturing the group: those (with
        // an iterator) were miscompiled in release builds, and Seeder's tiles arrived corrupted.
        try await withThrowingTaskGroup(of: (Int, Result).self) { group in
            var next = 0
            while next < count, next < limit {
                let index = next, element = self[index]
                group.addTask { (index, try await body(element)) }
                next += 1
            }
            var starting = true
            while let (index, result) = try await group.next() {
                starting = try take(index, result) && starting
                if starting, next < count {
                    let index = next, element = self[index]
                    group.addTask { (index, try await body(element)) }
                    next += 1
                }
            }
        }
    }
}
