package org.standalonecinder.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DigestsTest {

  /** The FIPS 180-2 vectors: a wrong algorithm, encoding or case fails here. */
  @ParameterizedTest(name = "\"{0}\"")
  @CsvSource({
    "'', e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "abc, ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  })
  void sha256HexIsTheStandardDigestInLowerCaseHex(String in, String hex) {
    assertThat(Digests.sha256Hex(in)).isEqualTo(hex);
  }
}
