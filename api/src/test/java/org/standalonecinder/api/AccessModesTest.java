package org.standalonecinder.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AccessModesTest {

  @ParameterizedTest(name = "{0} {1}: refused {2}")
  @CsvSource({
    "ReadWriteMany, Filesystem, true",
    "ReadWriteMany, , true",
    "ReadWriteOnce ReadWriteMany, Filesystem, true",
    "ReadWriteMany, Block, false",
    "ReadOnlyMany, Filesystem, false",
    "ReadOnlyMany, Block, false",
    "ReadWriteOnce, Filesystem, false",
    "ReadWriteOncePod, , false",
    "ReadWriteOnce ReadOnlyMany, Filesystem, false"
  })
  void readWriteManyOnlyOnRawBlocks(String modes, String volumeMode, boolean refused) {
    List<String> m = Arrays.asList(modes.split(" "));
    assertThat(AccessModes.refusal(m, volumeMode).isPresent()).isEqualTo(refused);
    AccessModes.refusal(m, volumeMode)
        .ifPresent(r -> assertThat(r).startsWith("ReadWriteMany needs volumeMode Block"));
  }
}
