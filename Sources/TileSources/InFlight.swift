/// One load for many concurrent askers of the same key: the first starts it, the others
/// wait for its result. When every asker has been cancelled the load is cancelled too
/// (nobody wants it: a stalled fetch must not run on for its clients that went away);
/// while one asker remains it runs on for that one. Used for tiles (the remote cache, the
/// server) and for the directories and tiles of PMTiles over HTTP.
public actor InFlight<Key: Hashable & Sendable, Value: Sendable> {
    private struct Load {
        let id: Int
        let task: Task<Value, Error>
        var askers: Int
    }

    private var loads: [Key: Load] = [:]
    private var nextID = 0

    public init() {}

    public func run(_ key: Key, _ load: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let id: Int, task: Task<Value, Error>
        if let existing = loads[key] {
            loads[key]?.askers += 1
            (id, task) = (existing.id, existing.task)
        } else {
            nextID += 1
            (id, task) = (nextID, Task { try await load() })
            loads[key] = Load(id: id, task: task, askers: 1)
        }
        defer { if loads[key]?.id == id { loads[key] = nil } }  // done: the next asker starts afresh
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            Task { await self.abandon(key, id) }
        }
    }

    /// One asker went away; the last one takes the load with it.
    private func abandon(_ key: Key, _ id: Int) {
        guard let load = loads[key], load.id == id else { return }
        if load.askers > 1 {
            loads[key]?.askers -= 1
        } else {
            load.task.cancel()
            loads[key] = nil
        }
    }
}
