import Foundation

/// How the top zoom samples the source image.
public enum Resampling: String, Sendable, CaseIterable {
    case bilinear, bicubic, lanczos

    /// Half the kernel's width, in source pixels.
    var radius: Int {
        switch self {
        case .bilinear: return 1
        case .bicubic: return 2
        case .lanczos: return 3
        }
    }

    func weight(_ t: Double) -> Double {
        let x = abs(t)
        switch self {
        case .bilinear:
            return max(0, 1 - x)
        case .bicubic:  // Catmull-Rom (a = -0.5), as GDAL's cubic
            if x < 1 { return 1.5 * x * x * x - 2.5 * x * x + 1 }
            if x < 2 { return -0.5 * x * x * x + 2.5 * x * x - 4 * x + 2 }
            return 0
        case .lanczos:
            if x < 1e-9 { return 1 }
            if x >= 3 { return 0 }
            let px = Double.pi * x
            return 3 * sin(px) * sin(px / 3) / (px * px)
        }
    }

    /// The source indices and normalised weights for a sample at continuous coordinate
    /// `s` (pixel centres at i + 0.5), clamped to `0..<count`.
    func taps(_ s: Double, count: Int, into indices: inout [Int], _ weights: inout [Float]) {
        let u = s - 0.5
        let base = Int(u.rounded(.down))
        indices.removeAll(keepingCapacity: true)
        weights.removeAll(keepingCapacity: true)
        var sum = 0.0
        for i in (base - radius + 1)...(base + radius) {
            let w = weight(u - Double(i))
            if w == 0 { continue }
            indices.append(min(max(i, 0), count - 1))
            weights.append(Float(w))
            sum += w
        }
        if sum != 0 { for k in weights.indices { weights[k] /= Float(sum) } }
    }
}
