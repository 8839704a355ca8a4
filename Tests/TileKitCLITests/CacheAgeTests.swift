import Testing
@testable import TileKitCLI

/// `cache prune --max-age`: a number with an optional unit, as a `Duration`.
@Suite struct CacheAgeTests {
    @Test(arguments: [("3600", Duration.seconds(3600)), ("3600s", .seconds(3600)), ("90m", .seconds(5400)), ("12h", .seconds(43_200)),
                      ("30d", .seconds(2_592_000)), ("0.5s", .milliseconds(500))])
    func agesHaveTheirUnits(text: String, age: Duration) throws {
        #expect(try Parse.age(text) == age)
    }

    /// An age no fetch can be older than is kept at 10^15 s instead of trapping `Duration`.
    @Test func aHugeAgeIsBoundedNotATrap() throws {
        #expect(try Parse.age("1e300d") == .seconds(1e15))
        #expect(throws: CLIError.usage("age \"-5m\" is not a number with s, m, h or d")) { try Parse.age("-5m") }
    }
}
