import Foundation
import TileSources
import TileMath

extension Freshness {
    /// The `Cache-Control` value for a tile: `no-store` and `no-cache` passed on from the
    /// upstream, otherwise the layer's max-age, shortened to what the upstream's freshness
    /// leaves (whole seconds).
    func cacheControl(maxAgeSeconds maxAge: Int, now: EpochSeconds = Date().timeIntervalSince1970) -> String {
        if noStore { return "no-store" }
        if noCache { return "no-cache" }
        let seconds = secondsLeft(now: now).map { min($0, maxAge) } ?? maxAge
        return "public, max-age=\(max(0, seconds))"
    }

    /// When the server's memory cache must drop the tile; nil when the source sets no
    /// limit. (Tiles that are not `isReusable` are not kept at all.)
    var memoryExpiry: ContinuousClock.Instant? {
        secondsLeft(now: Date().timeIntervalSince1970).map { ContinuousClock.now + .seconds($0) }
    }
}
