// Marker regions for bad_marker.md: one complete region, one left open.
// [present_region.begin]
int Present() { return 1; }
// [present_region.end]

// [dangling_region.begin]
int Dangling() { return 2; }
