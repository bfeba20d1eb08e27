package org.standalonecinder.provisioner.mapping;

import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecretReference;
import java.util.Map;
import java.util.Optional;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;

/**
 * iSCSI: {@code spec.iscsi} with portal(s), IQN, LUN, the cluster's initiator name, and a {@code
 * kubernetes.io/iscsi-chap} Secret when Cinder set up CHAP.
 *
 * <p>The initiator name goes into the PV because many targets (LIO, most arrays) admit only the
 * initiator Cinder was told about; without it a node logs in with its own name and is refused.
 */
public final class IscsiMapper implements VolumeMapper {

  /** The Secret type the kubelet's iSCSI plugin reads CHAP credentials from. */
  public static final String CHAP_SECRET_TYPE = "kubernetes.io/iscsi-chap";

  public static final String SESSION_USER = "node.session.auth.username";
  public static final String SESSION_PASSWORD = "node.session.auth.password";
  public static final String DISCOVERY_USER = "discovery.sendtargets.auth.username";
  public static final String DISCOVERY_PASSWORD = "discovery.sendtargets.auth.password";

  /** The CHAP Secret's name for a PV. */
  public static String secretName(String pvName) {
    return "chap-" + pvName;
  }

  @Override
  public String driverVolumeType() {
    return "iscsi";
  }

  @Override
  public MappedVolume map(ConnectionInfo info, MappingContext ctx) {
    IscsiTarget target = IscsiTarget.of(info);
    if (target.session() == null && !ctx.chapOptional()) {
      String auth = info.string("auth_method");
      throw new UnmappableExportException(
          "Cinder exported the volume over iSCSI without CHAP (auth_method "
              + (auth == null || auth.isBlank() ? "absent" : auth)
              + "): any pod that reaches "
              + target.portal()
              + " could read and write it, so it was refused and undone. Have Cinder's driver use"
              + " CHAP (e.g. use_chap_auth = True for LVM/tgt), or, if the storage network is"
              + " closed to pods, allow it: the class parameter iscsiChap: optional, or"
              + " --iscsi-chap optional (env ISCSI_CHAP)");
    }
    Map<String, String> chap = target.chapData();
    Optional<Secret> secret = Optional.empty();
    SecretReference ref = null;
    if (!chap.isEmpty()) {
      String name = secretName(ctx.pvName());
      ref = new SecretReference(name, ctx.secretNamespace());
      secret =
          Optional.of(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .withNamespace(ctx.secretNamespace())
                  .withLabels(ctx.secretLabels())
                  .endMetadata()
                  .withType(CHAP_SECRET_TYPE)
                  .withStringData(chap)
                  .build());
    }
    ISCSIPersistentVolumeSource source =
        target.source(ctx.initiatorName(), ctx.block() ? null : ctx.fsType(), ctx.readOnly(), ref);
    return new MappedVolume(spec -> spec.setIscsi(source), secret);
  }
}
