import Foundation

/// Distances, bearings and destinations on the Earth.
///
/// Spherical formulas use the mean Earth radius (IUGG R1 = 6,371,008.8 m) and are within
/// 0.6% of the ellipsoid; the ellipsoidal ones solve Vincenty's formulae on WGS84 and are good to well
/// under a millimetre. Angles are degrees, bearings clockwise from true north in [0, 360).
public enum Geodesy {
    /// Mean Earth radius (IUGG R1), meters.
    public static let meanEarthRadius = 6_371_008.8

    /// WGS84 ellipsoid: semi-major axis a (m) and flattening f.
    public static let wgs84SemiMajorAxis = 6_378_137.0
    public static let wgs84Flattening = 1 / 298.257223563
    static var wgs84SemiMinorAxis: Double { wgs84SemiMajorAxis * (1 - wgs84Flattening) }

    /// Great-circle distance in meters on the mean sphere (haversine).
    public static func haversineDistance(_ a: Coordinate, _ b: Coordinate) -> Double {
        meanEarthRadius * centralAngle(a, b)
    }

    /// The angle at the Earth's centre between two points, radians.
    static func centralAngle(_ a: Coordinate, _ b: Coordinate) -> Double {
        let dLat = (b.latitude - a.latitude).radians
        let dLon = (b.longitude - a.longitude).radians
        let h = sin(dLat / 2) * sin(dLat / 2)
            + cos(a.latitude.radians) * cos(b.latitude.radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * atan2(sqrt(h), sqrt(max(0, 1 - h)))
    }

    /// Geodesic distance in meters on the WGS84 ellipsoid (Vincenty's inverse formula,
    /// accurate to ~0.1 mm).
    ///
    /// Returns nil for nearly antipodal points (within about half a degree of the
    /// opposite side of the Earth), where the iteration does not converge.
    public static func ellipsoidalDistance(_ a: Coordinate, _ b: Coordinate) -> Double? {
        vincentyInverse(a, b)?.distance
    }

    /// Vincenty's inverse solution: distance (m) and initial bearing (degrees).
    /// T. Vincenty, Survey Review XXIII (176), 1975.
    static func vincentyInverse(_ p1: Coordinate, _ p2: Coordinate) -> (distance: Double, initialBearing: Double)? {
        let a = wgs84SemiMajorAxis, f = wgs84Flattening, b = wgs84SemiMinorAxis
        let L = (p2.longitude - p1.longitude).radians
        let U1 = atan((1 - f) * tan(p1.latitude.radians))
        let U2 = atan((1 - f) * tan(p2.latitude.radians))
        let sinU1 = sin(U1), cosU1 = cos(U1), sinU2 = sin(U2), cosU2 = cos(U2)
        var lambda = L
        var sinSigma = 0.0, cosSigma = 0.0, sigma = 0.0, cosSqAlpha = 0.0, cos2SigmaM = 0.0
        var sinLambda = 0.0, cosLambda = 0.0
        var converged = false
        for _ in 0..<200 {
            sinLambda = sin(lambda)
            cosLambda = cos(lambda)
            let t1 = cosU2 * sinLambda
            let t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda
            sinSigma = sqrt(t1 * t1 + t2 * t2)
            if sinSigma == 0 { return (0, 0) }  // the same point
            cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            cosSqAlpha = 1 - sinAlpha * sinAlpha
            // On the equator cosSqAlpha is 0 and cos2SigmaM is undefined: use 0.
            cos2SigmaM = cosSqAlpha != 0 ? cosSigma - 2 * sinU1 * sinU2 / cosSqAlpha : 0
            let C = f / 16 * cosSqAlpha * (4 + f * (4 - 3 * cosSqAlpha))
            let previous = lambda
            lambda = L + (1 - C) * f * sinAlpha
                * (sigma + C * sinSigma * (cos2SigmaM + C * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            if abs(lambda - previous) < 1e-12 {
                converged = true
                break
            }
        }
        guard converged else { return nil }
        let uSq = cosSqAlpha * (a * a - b * b) / (b * b)
        let A = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
        let B = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
        let deltaSigma = B * sinSigma * (cos2SigmaM + B / 4 * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
            - B / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
        let distance = b * A * (sigma - deltaSigma)
        let bearing = atan2(cosU2 * sinLambda, cosU1 * sinU2 - sinU1 * cosU2 * cosLambda).degrees
        return (distance, normalizedBearing(bearing))
    }

    /// Initial great-circle bearing from `a` towards `b`, degrees in [0, 360).
    public static func bearing(from a: Coordinate, to b: Coordinate) -> Double {
        let phi1 = a.latitude.radians, phi2 = b.latitude.radians
        let dLon = (b.longitude - a.longitude).radians
        let y = sin(dLon) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLon)
        return normalizedBearing(atan2(y, x).degrees)
    }

    /// The point `distance` meters from `start` along the great circle with initial `bearing`
    /// (mean sphere). Longitude is wrapped into [-180, 180).
    public static func destination(from start: Coordinate, distance: Double, bearing: Double) -> Coordinate {
        let delta = distance / meanEarthRadius, theta = bearing.radians
        let phi1 = start.latitude.radians, lambda1 = start.longitude.radians
        let phi2 = asin(sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta))
        let lambda2 = lambda1 + atan2(sin(theta) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
        return Coordinate(latitude: phi2.degrees, longitude: lambda2.degrees).wrapped
    }

    /// The point `distance` meters from `start` along the geodesic with initial `bearing`,
    /// on the WGS84 ellipsoid (Vincenty's direct formula). Longitude wrapped into [-180, 180).
    public static func ellipsoidalDestination(from start: Coordinate, distance: Double, bearing: Double) -> Coordinate {
        let a = wgs84SemiMajorAxis, f = wgs84Flattening, b = wgs84SemiMinorAxis
        let alpha1 = bearing.radians
        let sinAlpha1 = sin(alpha1), cosAlpha1 = cos(alpha1)
        let tanU1 = (1 - f) * tan(start.latitude.radians)
        let cosU1 = 1 / sqrt(1 + tanU1 * tanU1), sinU1 = tanU1 * cosU1
        let sigma1 = atan2(tanU1, cosAlpha1)
        let sinAlpha = cosU1 * sinAlpha1
        let cosSqAlpha = 1 - sinAlpha * sinAlpha
        let uSq = cosSqAlpha * (a * a - b * b) / (b * b)
        let A = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
        let B = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
        var sigma = distance / (b * A)
        var cos2SigmaM = 0.0, sinSigma = 0.0, cosSigma = 0.0
        for _ in 0..<200 {
            cos2SigmaM = cos(2 * sigma1 + sigma)
            sinSigma = sin(sigma)
            cosSigma = cos(sigma)
            let deltaSigma = B * sinSigma * (cos2SigmaM + B / 4 * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
                - B / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
            let previous = sigma
            sigma = distance / (b * A) + deltaSigma
            if abs(sigma - previous) < 1e-12 { break }
        }
        cos2SigmaM = cos(2 * sigma1 + sigma)
        sinSigma = sin(sigma)
        cosSigma = cos(sigma)
        let x = sinU1 * sinSigma - cosU1 * cosSigma * cosAlpha1
        let phi2 = atan2(sinU1 * cosSigma + cosU1 * sinSigma * cosAlpha1, (1 - f) * sqrt(sinAlpha * sinAlpha + x * x))
        let lambda = atan2(sinSigma * sinAlpha1, cosU1 * cosSigma - sinU1 * sinSigma * cosAlpha1)
        let C = f / 16 * cosSqAlpha * (4 + f * (4 - 3 * cosSqAlpha))
        let L = lambda - (1 - C) * f * sinAlpha
            * (sigma + C * sinSigma * (cos2SigmaM + C * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
        return Coordinate(latitude: phi2.degrees, longitude: start.longitude + L.degrees).wrapped
    }

    /// The point a `fraction` of the way from `a` to `b` along the great circle (mean sphere).
    public static func intermediatePoint(from a: Coordinate, to b: Coordinate, fraction: Double) -> Coordinate {
        let delta = centralAngle(a, b)
        guard delta > 1e-12 else { return a }
        let phi1 = a.latitude.radians, lambda1 = a.longitude.radians, phi2 = b.latitude.radians, lambda2 = b.longitude.radians
        let p = sin((1 - fraction) * delta) / sin(delta), q = sin(fraction * delta) / sin(delta)
        let x = p * cos(phi1) * cos(lambda1) + q * cos(phi2) * cos(lambda2)
        let y = p * cos(phi1) * sin(lambda1) + q * cos(phi2) * sin(lambda2)
        let z = p * sin(phi1) + q * sin(phi2)
        return Coordinate(latitude: atan2(z, sqrt(x * x + y * y)).degrees, longitude: atan2(y, x).degrees)
    }

    /// A line through `points` that follows great circles: each segment longer than
    /// `maxSegment` meters is divided into pieces no longer than that.
    public static func geodesicLine(_ points: [Coordinate], maxSegment: Double = 20_000) -> [Coordinate] {
        guard let first = points.first else { return [] }
        var out = [first]
        for (a, b) in zip(points, points.dropFirst()) {
            let pieces = max(1, Int((haversineDistance(a, b) / maxSegment).rounded(.up)))
            for i in 1...pieces { out.append(intermediatePoint(from: a, to: b, fraction: Double(i) / Double(pieces))) }
        }
        return out
    }

    /// A circle of `radius` meters around `center` as a closed ring of `segments` + 1 points
    /// (first equals last, counter-clockwise as RFC 7946 wants exterior rings), each on the
    /// WGS84 geodesic from the centre, so the circle is round in meters at any latitude.
    public static func circle(center: Coordinate, radius: Double, segments: Int = 64) -> [Coordinate] {
        precondition(segments >= 3, "a circle needs at least 3 segments")
        var ring = (0..<segments).map { index in
            // Counter-clockwise: bearings decrease from north through west.
            ellipsoidalDestination(from: center, distance: radius, bearing: 360 - Double(index) * 360 / Double(segments))
        }
        ring.append(ring[0])
        return ring
    }

    /// Shortest distance in meters from a point to a polyline (mean sphere): to the nearest
    /// segment, where the perpendicular falls inside it, or to the nearest vertex.
    public static func distance(from point: Coordinate, toPolyline line: [Coordinate]) -> Double {
        guard let first = line.first else { return .infinity }
        guard line.count > 1 else { return haversineDistance(point, first) }
        var best = Double.infinity
        for (a, b) in zip(line, line.dropFirst()) {
            best = min(best, distance(from: point, toSegmentFrom: a, to: b))
        }
        return best
    }

    static func distance(from p: Coordinate, toSegmentFrom a: Coordinate, to b: Coordinate) -> Double {
        let d13 = centralAngle(a, p)
        let d12 = centralAngle(a, b)
        guard d12 > 0 else { return d13 * meanEarthRadius }
        let theta13 = bearing(from: a, to: p).radians, theta12 = bearing(from: a, to: b).radians
        let crossTrack = asin(sin(d13) * sin(theta13 - theta12))
        // Behind the start of the segment: the start is nearest.
        if cos(theta13 - theta12) < 0 { return d13 * meanEarthRadius }
        let alongTrack = acos(max(-1, min(1, cos(d13) / cos(crossTrack))))
        if alongTrack > d12 { return haversineDistance(p, b) }
        return abs(crossTrack) * meanEarthRadius
    }

    static func normalizedBearing(_ degrees: Double) -> Double {
        let value = degrees.truncatingRemainder(dividingBy: 360)
        return value < 0 ? value + 360 : value
    }
}
