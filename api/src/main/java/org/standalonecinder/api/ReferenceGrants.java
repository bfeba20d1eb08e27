package org.standalonecinder.api;

import java.util.List;
import java.util.Map;

/**
 * The ecosystem's consent to a reference across namespaces, read for clones: a Gateway API {@code
 * ReferenceGrant} ({@code gateway.networking.k8s.io/v1beta1}) in the source's namespace, made by
 * whoever may write there, lets claims of the namespaces it lists in {@code from} use the claims it
 * lists in {@code to} (all of them when {@code to} names none) as a data source. It is what
 * Kubernetes' cross-namespace data sources ({@code dataSourceRef.namespace}) rest on; the project
 * accepts it beside the source's own {@link ClaimAnnotations#CLONE_GRANT} annotation. Anything that
 * is not the expected shape grants nothing.
 */
public final class ReferenceGrants {

  /** The API group of ReferenceGrants. */
  public static final String GROUP = "gateway.networking.k8s.io";

  /** The version read: served by every Gateway API release that has the kind. */
  public static final String VERSION = "v1beta1";

  public static final String KIND = "ReferenceGrant";
  public static final String PLURAL = "referencegrants";

  /**
   * Grants read a page: a namespace's owner writes them, and each may carry up to 256 KiB of
   * annotations, so a page is kept small and only one is held at a time.
   */
  public static final int PAGE = 20;

  /** Pages read at most: past 200 grants, the rest of a namespace's grant nothing. */
  public static final int MAX_PAGES = 10;

  /**
   * One page of a namespace's ReferenceGrants: their {@code spec}s as JSON maps, and the list's
   * continue token for the next page (null or empty at the end).
   */
  public record Page(List<Map<String, Object>> specs, String next) {
    public Page {
      specs = specs == null ? List.of() : specs;
    }

    /** Everything in one page (what a cluster without paging, or a test, answers). */
    public static Page of(List<Map<String, Object>> specs) {
      return new Page(specs, null);
    }
  }

  /**
   * Whether the grants {@code pages} reads (given the previous page's continue token, null for the
   * first) let claims of {@code fromNamespace} use the claim {@code sourceName}: read a page at a
   * time, stopping at the first that grants it, and after {@link #MAX_PAGES}.
   */
  public static boolean allowClaim(
      java.util.function.Function<String, Page> pages, String fromNamespace, String sourceName) {
    String next = null;
    for (int i = 0; i < MAX_PAGES; i++) {
      Page page = pages.apply(next);
      if (allowClaim(page.specs(), fromNamespace, sourceName)) {
        return true;
      }
      if (page.next() == null || page.next().isEmpty()) {
        return false;
      }
      next = page.next();
    }
    return false;
  }

  private static final String CLAIM = "PersistentVolumeClaim";

  private ReferenceGrants() {}

  /**
   * Whether any of the grants (each a ReferenceGrant's {@code spec}, as JSON maps) lets claims of
   * {@code fromNamespace} use the claim {@code sourceName} of the grants' namespace.
   */
  public static boolean allowClaim(
      List<Map<String, Object>> specs, String fromNamespace, String sourceName) {
    for (Map<String, Object> spec : specs) {
      if (spec != null
          && any(spec.get("from"), f -> core(f) && fromNamespace.equals(f.get("namespace")))
          && any(spec.get("to"), t -> core(t) && names(t, sourceName))) {
        return true;
      }
    }
    return false;
  }

  /** A PersistentVolumeClaim of the core group ({@code group: ""}). */
  private static boolean core(Map<?, ?> ref) {
    Object group = ref.get("group");
    return (group == null || "".equals(group)) && CLAIM.equals(ref.get("kind"));
  }

  /** Whether a {@code to} entry names the claim, or every claim (no name, or an empty one). */
  private static boolean names(Map<?, ?> to, String sourceName) {
    Object name = to.get("name");
    return name == null || "".equals(name) || sourceName.equals(name);
  }

  private static boolean any(Object list, java.util.function.Predicate<Map<?, ?>> test) {
    if (!(list instanceof List<?> entries)) {
      return false;
    }
    for (Object e : entries) {
      if (e instanceof Map<?, ?> m && test.test(m)) {
        return true;
      }
    }
    return false;
  }
}
