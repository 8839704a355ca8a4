import Foundation

/// A progress line on stderr for long work: `[=====>     ] 1,234/5,000  24.7 tiles/s  ETA 2m31s`.
/// On a terminal it redraws in place at most 5 times a second; otherwise (a log, CI) it
/// prints a line at every tenth of the way.
struct ProgressBar {
    let label: String
    let io: CommandIO
    let interactive = isatty(STDERR_FILENO) == 1
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var lastTenth = -1

    init(label: String, io: CommandIO) {
        self.label = label
        self.io = io
    }

    mutating func update(done: Int, total: Int, elapsed: Duration, detail: String = "") {
        let seconds = max(elapsed.seconds, 0.001)
        let rate = Double(done) / seconds
        let remaining = rate > 0 ? Double(total - done) / rate : 0
        let fraction = total > 0 ? Double(done) / Double(total) : 1
        let width = 24
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "=", count: filled) + (filled < width ? ">" : "") + String(repeating: " ", count: max(0, width - filled - 1))
        let line = "\(label) [\(bar)] \(done)/\(total)  \(String(format: "%.1f", rate)) tiles/s  ETA \(Self.format(remaining))\(detail.isEmpty ? "" : "  " + detail)"
        if interactive {
            let now = ContinuousClock.now
            guard now - lastDraw >= .milliseconds(200) || done == total else { return }
            lastDraw = now
            FileHandle.standardError.write(Data(("\r" + line + "\u{1B}[K" + (done == total ? "\n" : "")).utf8))
        } else {
            let tenth = Int(fraction * 10)
            guard tenth > lastTenth else { return }
            lastTenth = tenth
            io.writeError(line)
        }
    }

    static func format(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s >= 3600 { return "\(s / 3600)h\(String(format: "%02d", s % 3600 / 60))m" }
        if s >= 60 { return "\(s / 60)m\(String(format: "%02d", s % 60))s" }
        return "\(s)s"
    }
}
