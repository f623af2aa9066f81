// Writes (or, with an empty value, deletes) one cookie in the app's own document (the login token,
// the dataset last worked on). Streamlit has no API for setting a cookie; the app reads it back with
// st.context.cookies when the browser reconnects. Python draws this on every run once it has asked
// for a value, so it writes only when the page's cookie differs, and reports nothing back: a report
// would start one more run, which could take over the run a key press had just started.
function current(name) {
  const prefix = `${name}=`;
  const found = document.cookie.split("; ").find((part) => part.startsWith(prefix));
  return found === undefined ? "" : found.slice(prefix.length);
}

export default function (component) {
  const { data } = component;
  if (!data || typeof data.name !== "string" || typeof data.value !== "string") {
    return;
  }
  if (current(data.name) === data.value) {
    return;
  }
  const attributes = ["Path=/", `Max-Age=${data.value ? data.maxAge : 0}`, "SameSite=Strict"];
  if (window.location.protocol === "https:") {
    attributes.push("Secure");
  }
  document.cookie = [`${data.name}=${data.value}`, ...attributes].join("; ");
}
