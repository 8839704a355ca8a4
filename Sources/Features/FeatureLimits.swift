/// The most a data file may ask of the readers. Past these a file is refused with a
/// `FeatureError`, so hostile or broken input costs bounded time, memory and stack.
///
/// Real files stay far below them: a GPX, KML or plist nests about 10 elements deep, a
/// GeoJSON about 10 arrays and objects (a MultiPolygon's positions are 8 levels down).
public enum FeatureLimits {
    /// A data file larger than this (bytes) is not read: 256 MiB, several times the
    /// largest GPX track or GeoJSON layer a map draws (and parsed files take several times
    /// their size in memory).
    public static let fileBytes = 256 << 20

    /// XML elements nested deeper than this are refused, counted as they start. libxml2's
    /// push parser (2.9.14) has no depth limit of its own: 300,000 levels parse, and the
    /// element tree then overflows the stack when it is released (and so would any
    /// recursive walk of it).
    public static let xmlDepth = 256

    /// At most this many XML elements in one document (a GPX track point with a time and
    /// an elevation is 3 elements). Each costs about 300 bytes in the tree (a 37 MB GPX of
    /// 400,000 track points took 390 MB), so the budget bounds a document to about 1.3 GB.
    public static let xmlElements = 4_000_000

    /// JSON arrays and objects nested deeper than this are refused before Foundation
    /// parses them: its parser and decoder recurse, about 2 KB of stack per level in a
    /// debug build, so 256 levels fit a 1 MB thread stack. (Foundation itself stops at 512.)
    public static let jsonDepth = 256
}
