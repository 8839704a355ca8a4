extension Array where Element: Sendable {
    /// `map` with `body` run in child tasks, at most `maxInFlight` at once (less than 1 counts
    /// as 1), the results in the elements' order. The first error thrown is rethrown: the
    /// tasks still running are cancelled (their `Task.isCancelled` turns true) and no more are
    /// started. The one bounded task group of the project (pyramid tiles, snapshot tiles), so
    /// that parallel work never starts one task per item.
    public func concurrentMap<Mapped: Sendable>(maxInFlight: Int,
                                                _ body: @escaping @Sendable (Element) async throws -> Mapped) async throws -> [Mapped] {
        let limit = Swift.max(1, maxInFlight)
        var results = [Mapped?](repeating: nil, count: count)
        // A plain loop over an index (as Seeder's group): simple enough to leave no doubt
        // about what is in flight.
        try await withThrowingTaskGroup(of: (Int, Mapped).self) { group in
            var next = 0
            while next < count, next < limit {
                let index = next, element = self[index]
                group.addTask { (index, try await body(element)) }
                next += 1
            }
            while let (index, mapped) = try await group.next() {
                results[index] = mapped
                if next < count {
                    let index = next, element = self[index]
                    group.addTask { (index, try await body(element)) }
                    next += 1
                }
            }
        }
        // Every index was filled: the group ended without an error.
        return results.compactMap { $0 }
    }
}
