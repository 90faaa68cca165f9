// Beat 10: the kitchen analogy. Every kitchen note is a <details>; the one in the analogy section
// can open or close all of them at once, so the analogy reads as one thread through the page.

export function setup() {
  const button = document.getElementById('kitchen-all');
  const notes = () => [...document.querySelectorAll('details.kitchen:not(.kitchen-main)')];
  const sync = () => {
    const allOpen = notes().every((d) => d.open);
    button.setAttribute('aria-pressed', String(allOpen));
    button.textContent = allOpen ? 'Close every kitchen note on the page' : 'Open every kitchen note on the page';
  };
  button.addEventListener('click', () => {
    const open = !notes().every((d) => d.open);
    for (const d of notes()) d.open = open;
    sync();
  });
  for (const d of notes()) d.addEventListener('toggle', sync);
  sync();
}
