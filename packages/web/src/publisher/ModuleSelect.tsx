/** The portal's module picker: one of the publisher's modules, or with `allLabel` all of them (the value ""). */
export function ModuleSelect({ id, modules, value, onChange, allLabel }: { id: string; modules: { id: string; name: string }[]; value: string; onChange: (moduleId: string) => void; allLabel?: string }) {
  return (
    <div class="field">
      <label for={id}>Module</label>
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
        {allLabel !== undefined && <option value="">{allLabel}</option>}
        {modules.map((module) => (
          <option value={module.id} key={module.id}>
            {module.name} ({module.id})
          </option>
        ))}
      </select>
    </div>
  );
}
