/// Polls `condition` until it holds or `limit` has passed by the clock; whether it held.
///
/// By the clock and with a wide default, not a count of polls: `swift test` starts every
/// test at once on this machine's two cores, and an async test then waits for Swift's
/// cooperative pool, which the whole suite shares (tests that take 0.2 s alone took 38-64 s
/// in full runs). A bound is there to end a test that would never pass, not to time it.
public func eventually(within limit: Duration = .seconds(120), every interval: Duration = .milliseconds(10),
                       _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: interval)
    }
}
