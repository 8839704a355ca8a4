extension RoutePlayback {
    /// The same route played `timeWarp` times faster: its times divided, nothing read again
    /// (a map reads its routes once; each `/play` asks for its own warp). A warp of 1 gives
    /// the route unchanged, to the bit.
    public func warped(by timeWarp: Double) throws(GameDataError) -> RoutePlayback {
        guard Self.timeWarpRange.contains(timeWarp) else {
            throw GameDataError(file: name, place: "time-warp",
                                reason: "\(timeWarp) is out of range [\(Self.timeWarpRange.lowerBound), \(Self.timeWarpRange.upperBound)]")
        }
        return RoutePlayback(warping: self, by: timeWarp)
    }

    private init(warping route: RoutePlayback, by timeWarp: Double) {
        points = route.points
        secondsFromStart = timeWarp == 1 ? route.secondsFromStart : route.secondsFromStart.map { $0 / timeWarp }
        noise = route.noise
        seed = route.seed
        name = route.name
    }
}
