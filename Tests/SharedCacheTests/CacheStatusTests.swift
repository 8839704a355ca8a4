import Testing
@testable import SharedCache

@Suite struct CacheStatusTests {
    typealias Entry = CacheStatus.Entry

    @Test(arguments: [
        // Memory hit: Redis was never asked.
        ([Entry.hit("tilekit-memory")], "tilekit-memory; hit"),
        // Memory miss answered by Redis; memory kept it. Nearest the origin comes first.
        ([.miss("tilekit-memory", stored: true), .hit("tilekit-redis")], "tilekit-redis; hit, tilekit-memory; fwd=miss; stored"),
        // Both missed: rendered, stored in both.
        ([.miss("tilekit-memory", stored: true), .miss("tilekit-redis", stored: true)],
         "tilekit-redis; fwd=miss; stored, tilekit-memory; fwd=miss; stored"),
        // Redis down: bypassed, and the reason is a token.
        ([.miss("tilekit-memory", stored: true), .bypass("tilekit-redis", detail: "unavailable")],
         "tilekit-redis; fwd=bypass; detail=unavailable, tilekit-memory; fwd=miss; stored"),
        // Another request was already rendering it: collapsed.
        ([.miss("tilekit-memory", collapsed: true)], "tilekit-memory; fwd=miss; collapsed"),
        ([.miss("tilekit-memory", collapsed: false)], "tilekit-memory; fwd=miss; collapsed=?0"),
        ([.hit("tilekit-redis", ttl: 3540)], "tilekit-redis; hit; ttl=3540"),
        ([.hit("tilekit-redis", ttl: -12)], "tilekit-redis; hit; ttl=-12"),
        ([Entry(cache: "tilekit-memory", hit: false, forward: .uriMiss, forwardStatus: 200, stored: true)],
         "tilekit-memory; fwd=uri-miss; fwd-status=200; stored"),
        // Names and details that are not tokens become quoted strings.
        ([Entry.hit("TileKit memory")], "\"TileKit memory\"; hit"),
        ([Entry.bypass("tilekit-redis", detail: "timeout after 50 ms")], "tilekit-redis; fwd=bypass; detail=\"timeout after 50 ms\""),
        ([Entry.bypass("tilekit-redis", detail: #"say "hi" \ bye"#)], #"tilekit-redis; fwd=bypass; detail="say \"hi\" \\ bye""#),
        ([Entry.bypass("tilekit-redis", detail: "naïve\n")], "tilekit-redis; fwd=bypass; detail=\"na?ve?\""),
        ([Entry.hit("1cache")], "\"1cache\"; hit"),
        ([Entry.hit("*star:1/2")], "*star:1/2; hit"),
        ([Entry](), ""),
    ])
    func headerValue(_ lookupOrder: [Entry], _ expected: String) {
        #expect(CacheStatus(lookupOrder: lookupOrder).headerValue == expected)
    }

    @Test func everyForwardReasonIsAnRFC9211Token() {
        #expect(CacheStatus.Forward.allCases.map(\.rawValue) == ["bypass", "method", "uri-miss", "vary-miss", "miss", "request", "stale", "partial"])
        for reason in CacheStatus.Forward.allCases { #expect(CacheStatus.isToken(reason.rawValue)) }
    }
}
