#pragma once
/// @file release_noise.hpp
/// The noise source of a release of the API (`test`, its baselines, `select`, `bma --method
/// adassp`): with a seed, a reproducible simulation stream — the release is then not private
/// (api::ReleaseReport says so) — else the kernel CSPRNG (runtime::SecureRng). One definition for
/// every release path, so a seeded release of each is reproducible in the same way (docs/privacy.md).

#include <cstdint>
#include <optional>

#include "dpmu/core/random.hpp"
#include "dpmu/core/release.hpp"
#include "dpmu/runtime/secure_random.hpp"

namespace dpmu::api {

/// The noise of one release. `noise` draws from `noise_rng` = RngStream(seed, key, 0, noise) when a
/// seed is given, else from `secure_rng`; `secure_rng` is also the source of a real release's other
/// public randomness (e.g. the seed of a post-processing simulation). Neither copyable nor movable:
/// `noise` refers to the members.
struct ReleaseNoise {
  runtime::SecureRng secure_rng;
  core::RngStream noise_rng;
  core::NoiseSource noise;
  /// @param key the release path's stream key (core::fnv1a_64 of its name).
  ReleaseNoise(std::optional<std::uint64_t> seed, std::uint64_t key)
      : noise_rng(seed.value_or(0), key, 0, core::StreamPurpose::noise),
        noise(seed ? core::NoiseSource::simulation(noise_rng)
                   : core::NoiseSource::secure([this] { return secure_rng(); })) {}
  ReleaseNoise(const ReleaseNoise&) = delete;
  ReleaseNoise& operator=(const ReleaseNoise&) = delete;
};

}  // namespace dpmu::api
