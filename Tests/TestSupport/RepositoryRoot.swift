import Foundation

/// The repository's root folder, from the `#filePath` of a test file (Tests/TARGET/File.swift):
/// for the files tests read outside their own target (scripts/, Fuzz/, docs/, Examples/).
public func repositoryRoot(filePath: String = #filePath) -> URL {
    URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
