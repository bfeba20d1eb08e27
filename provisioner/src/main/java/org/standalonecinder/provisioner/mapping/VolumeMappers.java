package org.standalonecinder.provisioner.mapping;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;

/** The mappers by protocol; an export of any other protocol is refused with a clear reason. */
public final class VolumeMappers {

  private final Map<String, VolumeMapper> byType;

  public VolumeMappers(List<VolumeMapper> mappers) {
    this.byType =
        mappers.stream()
            .collect(Collectors.toUnmodifiableMap(m -> m.driverVolumeType(), Function.identity()));
  }

  /** The mappers this release has. */
  public static VolumeMappers standard() {
    return new VolumeMappers(List.of(new IscsiMapper(), new FcMapper(), new RbdMapper()));
  }

  public MappedVolume map(ConnectionInfo info, MappingContext ctx) {
    String type =
        info.driverVolumeType() == null ? "" : info.driverVolumeType().toLowerCase(Locale.ROOT);
    VolumeMapper m = byType.get(type);
    if (m == null) {
      throw new UnmappableExportException(
          "Cinder exported the volume over '"
              + info.driverVolumeType()
              + "', which this provisioner cannot turn into a PersistentVolume (supported: "
              + byType.keySet().stream().sorted().toList()
              + ")");
    }
    return m.map(info, ctx);
  }
}
