// Writes (or, with an empty value, deletes) one cookie in the app's own document (the login token,
// the dataset last worked on), then tells Python which write it carried out. Streamlit has no API for
// setting a cookie; the app reads it back with st.context.cookies when the browser reconnects.
export default function (component) {
  const { data, setStateValue } = component;
  if (!data || typeof data.name !== "string" || typeof data.value !== "string") {
    return;
  }
  const attributes = ["Path=/", `Max-Age=${data.value ? data.maxAge : 0}`, "SameSite=Strict"];
  if (window.location.protocol === "https:") {
    attributes.push("Secure");
  }
  document.cookie = [`${data.name}=${data.value}`, ...attributes].join("; ");
  setStateValue("written", data.write);
}
