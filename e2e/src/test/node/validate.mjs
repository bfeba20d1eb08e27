// Validates Kubernetes objects (a JSON array on stdin) against the OpenAPI schemas of
// kubernetes-models; prints one JSON line per object: {kind, name, error}.
import { readFileSync } from "node:fs";
const objects = JSON.parse(readFileSync(0, "utf8"));
const results = [];
for (const o of objects) {
  const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : ["", o.apiVersion];
  const pkg = group.endsWith("cert-manager.io") ? "@kubernetes-models/cert-manager"
    : group === "monitoring.coreos.com" ? "@kubernetes-models/prometheus-operator"
    : "kubernetes-models";
  const path = `${pkg}/${group ? group + "/" : ""}${version}/${o.kind}`;
  let error = null;
  try {
    const mod = await import(path);
    const Model = mod[o.kind] ?? mod.default;
    new Model(o).validate();
  } catch (e) {
    error = String(e.message ?? e);
  }
  results.push({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata?.name, model: path, error });
}
process.stdout.write(JSON.stringify(results));
