package org.standalonecinder.provisioner.mapping;

import io.fabric8.kubernetes.api.model.FCVolumeSourceBuilder;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;

/**
 * Fibre Channel: {@code spec.fc} with the target WWNs and the LUN. Cinder's FC drivers send {@code
 * target_wwn} as one string or a list, and often an {@code initiator_target_map} from our
 * initiators' WWPNs (the connector carries them) to the targets zoned for each; the node's FC
 * plugin finds the disk by target WWN and LUN, so every target the export names goes into the PV.
 * No Secret: FC has no authentication of its own.
 */
public final class FcMapper implements VolumeMapper {

  private static final Pattern WWN = Pattern.compile("[0-9a-f]{16}");

  @Override
  public String driverVolumeType() {
    return "fibre_channel";
  }

  @Override
  public MappedVolume map(ConnectionInfo info, MappingContext ctx) {
    Set<String> targets = new LinkedHashSet<>();
    List<String> bad = new ArrayList<>();
    collect(info.data().get("target_wwn"), targets, bad);
    if (info.data().get("initiator_target_map") instanceof Map<?, ?> map) {
      for (Object zoned : map.values()) {
        collect(zoned, targets, bad);
      }
    }
    Integer lun = lun(info.data().get("target_lun"));
    List<String> missing = new ArrayList<>();
    if (targets.isEmpty() && bad.isEmpty()) {
      missing.add("target_wwn (or initiator_target_map)");
    }
    if (lun == null) {
      missing.add("target_lun");
    }
    if (!missing.isEmpty()) {
      throw new UnmappableExportException(
          "Cinder's Fibre Channel connection info lacks "
              + String.join(", ", missing)
              + ": the backend's driver did not export the volume to this cluster's WWPNs (are"
              + " they configured, and zoned?)");
    }
    if (!bad.isEmpty()) {
      throw new UnmappableExportException(
          "Cinder's Fibre Channel connection info names targets that are not WWNs (16 hex"
              + " digits): "
              + bad);
    }
    return new MappedVolume(
        spec ->
            spec.setFc(
                new FCVolumeSourceBuilder()
                    .withTargetWWNs(List.copyOf(targets))
                    .withLun(lun)
                    .withFsType(ctx.block() ? null : ctx.fsType())
                    .withReadOnly(ctx.readOnly())
                    .build()),
        Optional.empty());
  }

  /** Adds the WWNs of a string, or of a list of strings, as the kubelet writes them. */
  private static void collect(Object raw, Set<String> targets, List<String> bad) {
    if (raw == null) {
      return;
    }
    Collection<?> values = raw instanceof Collection<?> c ? c : List.of(raw);
    for (Object v : values) {
      String wwn = normalise(String.valueOf(v));
      if (WWN.matcher(wwn).matches()) {
        targets.add(wwn);
      } else {
        bad.add(String.valueOf(v));
      }
    }
  }

  /** Lower case, without the colons or the {@code 0x} some drivers write. */
  public static String normalise(String wwn) {
    String w = wwn.trim().toLowerCase(Locale.ROOT).replace(":", "");
    return w.startsWith("0x") ? w.substring(2) : w;
  }

  private static Integer lun(Object raw) {
    if (raw instanceof Number n) {
      return n.intValue();
    }
    if (raw instanceof String s && s.matches("\\d+")) {
      return Integer.parseInt(s);
    }
    return null;
  }
}
