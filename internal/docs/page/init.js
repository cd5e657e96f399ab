window.ui = SwaggerUIBundle({
  urls: JSON.parse(document.getElementById("swagger-ui").dataset.documents),
  dom_id: "#swagger-ui",
  deepLinking: true,
  displayOperationId: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout"
});
